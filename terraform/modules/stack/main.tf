# Linoone's stack, composed once for every environment: resolver and management HTTP
# APIs, the issue, resolve and replay functions, the click DLQ pair, the engagement bus
# (imported, or created where create_bus is true), SSM configuration and alarms.
# Environments (../../envs/*) call it with their own defaults and configure the provider.
# See README.md and ../../README.md.

locals {
  name = "linoone-${var.environment}"

  # The resolver base URL (short_url = <base>/<token>) is the custom domain only when
  # `linoone discover` proved DNS routes it to the resolver (custom_domain_routable);
  # otherwise it is the real API Gateway resolver endpoint, never a placeholder.
  # See rules/infrastructure-discovery.md.
  # With the cdn option on, the resolver's public entry point is the CloudFront
  # distribution (behind WAF), a real endpoint too: short URLs must not bypass it.
  custom_domain_enabled = var.custom_domain_routable && var.custom_domain_name != ""
  resolver_base_url     = local.custom_domain_enabled ? "https://${var.custom_domain_name}" : (var.cdn_enabled ? one(module.cdn[*].url) : module.resolver_api.api_endpoint)

  common_environment = {
    LINOONE_ENVIRONMENT = var.environment
    LINOONE_LOG_LEVEL   = var.log_level
  }

  # The Persist routes each function may call: resolve only looks up
  # (POST /persist/gremlin); issue also ingests. persist_api_execution_arn ends with
  # /persist/* (validated).
  persist_gremlin_arn = "${trimsuffix(var.persist_api_execution_arn, "*")}gremlin"
  persist_ingest_arn  = "${trimsuffix(var.persist_api_execution_arn, "*")}ingest"

  # Behind CloudFront (the cdn option) API Gateway's source IP is an edge server's:
  # the resolve function takes the visitor's address from CloudFront-Viewer-Address,
  # on requests carrying the origin secret CloudFront adds (modules/cdn), since the
  # execute-api endpoint stays reachable directly. Without cdn, neither is set.
  resolve_visitor_environment = var.cdn_enabled ? tomap({
    LINOONE_VISITOR_IP_FROM      = "cloudfront"
    LINOONE_ORIGIN_VERIFY_SECRET = one(module.cdn[*].origin_verify_secret)
  }) : tomap({})
}

# --- configuration ---------------------------------------------------------------

# The Persist URL and the resolver base URL are in the functions' environment, not in
# SSM (issue 48): neither is secret nor changes between deploys, and a function's start
# must not wait on SSM. A changed value changes the function's configuration, so
# Lambda starts new instances with it. SSM keeps what changes at run time (the deny
# list) and what is secret (the idempotency key).

# The operator's deny list (issue 11): one rule per line, edited in SSM without a
# deploy; the issue and resolve functions read it again every 30 s. SSM refuses an
# empty value, so the initial one is a comment; Terraform never resets the rules.
resource "aws_ssm_parameter" "denylist" {
  name        = "/linoone/${var.environment}/denylist"
  description = "Deny list of target URLs: one rule per line (host, *.domain or http(s) URL prefix), # comments. Edit without a deploy."
  type        = "String"
  value       = "# deny list: one rule per line"

  lifecycle {
    ignore_changes = [value]
  }
}

# The key of tokens derived from Idempotency-Keys (issue 10): a SecureString whose
# value the operator puts out of band (e.g. `aws ssm put-parameter --overwrite
# --type SecureString --value "$(openssl rand -base64 48)"`); Terraform writes only a
# placeholder, which the issue function treats as "not set" (Idempotency-Key
# requests answer 503), exports it nowhere and never resets what the operator wrote.
resource "aws_ssm_parameter" "idempotency_secret" {
  name        = "/linoone/${var.environment}/idempotency-secret"
  description = "HMAC key of tokens derived from Idempotency-Keys: at least 32 bytes, put out of band. Changing it changes every derived token."
  type        = "SecureString"
  value       = "unset"

  lifecycle {
    ignore_changes = [value]
  }
}

# --- shared bus and click DLQ pair ---------------------------------------------------

module "event_bus" {
  source = "../event-bus"

  event_bus_name = var.event_bus_name
  create_bus     = var.create_bus
}

module "click_dlq" {
  source = "../click-dlq"

  name                   = "${local.name}-click-dlq"
  replay_function_name   = module.replay.function_name
  replay_timeout_seconds = module.replay.timeout_seconds
  maximum_concurrency    = var.replay_maximum_concurrency
}

# --- functions -----------------------------------------------------------------------

module "issue" {
  source = "../function"

  name               = "${local.name}-issue"
  filename           = "${var.artifacts_dir}/issue.zip"
  timeout_seconds    = var.api_timeout_seconds
  memory_mb          = var.function_memory_mb
  log_retention_days = var.log_retention_days

  environment_variables = merge(local.common_environment, {
    LINOONE_PERSIST_URL              = var.persist_url
    LINOONE_PERSIST_SIGV4            = "true"
    LINOONE_PERSIST_INLINE_LITERALS  = tostring(var.persist_inline_literals)
    LINOONE_RESOLVER_BASE_URL        = local.resolver_base_url
    LINOONE_DENYLIST_PARAM           = aws_ssm_parameter.denylist.name
    LINOONE_DENYLIST_REFRESH         = var.denylist_refresh
    LINOONE_METRICS_NAMESPACE        = var.metrics_namespace
    LINOONE_IDEMPOTENCY_SECRET_PARAM = aws_ssm_parameter.idempotency_secret.name
  })

  policy_statements = [
    {
      sid       = "InvokePersist"
      actions   = ["execute-api:Invoke"]
      resources = [local.persist_gremlin_arn, local.persist_ingest_arn]
    },
    {
      sid       = "ReadDenyList"
      actions   = ["ssm:GetParameter"]
      resources = [aws_ssm_parameter.denylist.arn]
    },
    {
      # Decryption with the AWS managed key aws/ssm needs no KMS grant.
      sid       = "ReadIdempotencySecret"
      actions   = ["ssm:GetParameter"]
      resources = [aws_ssm_parameter.idempotency_secret.arn]
    },
  ]
}

module "resolve" {
  source = "../function"

  name               = "${local.name}-resolve"
  filename           = "${var.artifacts_dir}/resolve.zip"
  timeout_seconds    = var.resolve_timeout_seconds
  memory_mb          = var.function_memory_mb
  log_retention_days = var.log_retention_days

  # Visitors keep being redirected when something else in the account (replay during
  # an outage, another service) takes the pool; sizing: terraform/README.md.
  reserved_concurrent_executions = var.resolve_reserved_concurrency

  environment_variables = merge(local.common_environment, {
    LINOONE_PERSIST_URL             = var.persist_url
    LINOONE_PERSIST_SIGV4           = "true"
    LINOONE_PERSIST_INLINE_LITERALS = tostring(var.persist_inline_literals)
    LINOONE_EVENT_BUS               = module.event_bus.arn
    LINOONE_CLICK_DLQ_URL           = module.click_dlq.queue_url
    LINOONE_PUBLISH_TIMEOUT         = var.publish_timeout
    LINOONE_DLQ_TIMEOUT             = var.dlq_timeout
    LINOONE_METRICS_NAMESPACE       = var.metrics_namespace
    LINOONE_DENYLIST_PARAM          = aws_ssm_parameter.denylist.name
    LINOONE_DENYLIST_REFRESH        = var.denylist_refresh
  }, local.resolve_visitor_environment)

  policy_statements = [
    {
      # Lookups only: the resolver never writes to Persist.
      sid       = "InvokePersist"
      actions   = ["execute-api:Invoke"]
      resources = [local.persist_gremlin_arn]
    },
    {
      sid       = "ReadDenyList"
      actions   = ["ssm:GetParameter"]
      resources = [aws_ssm_parameter.denylist.arn]
    },
    {
      sid       = "PublishClickFacts"
      actions   = ["events:PutEvents"]
      resources = [module.event_bus.arn]
    },
    {
      sid       = "DeadLetterClickFacts"
      actions   = ["sqs:SendMessage"]
      resources = [module.click_dlq.queue_arn]
    },
  ]
}

module "replay" {
  source = "../function"

  name               = "${local.name}-replay"
  filename           = "${var.artifacts_dir}/replay.zip"
  timeout_seconds    = var.replay_timeout_seconds
  memory_mb          = var.function_memory_mb
  log_retention_days = var.log_retention_days

  environment_variables = merge(local.common_environment, {
    LINOONE_EVENT_BUS         = module.event_bus.arn
    LINOONE_METRICS_NAMESPACE = var.metrics_namespace
  })

  policy_statements = [
    {
      sid       = "ConsumeClickDLQ"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"]
      resources = [module.click_dlq.queue_arn]
    },
    {
      sid       = "PublishClickFacts"
      actions   = ["events:PutEvents"]
      resources = [module.event_bus.arn]
    },
  ]
}

# --- HTTP APIs (routes = the operations of openapi.yaml, by tag) ---------------------

module "resolver_api" {
  source = "../http-api"

  name               = "${local.name}-resolver"
  log_retention_days = var.log_retention_days
  # One second above the resolve function's timeout: its budget decides.
  integration_timeout_milliseconds = (var.resolve_timeout_seconds + 1) * 1000
  throttling_burst_limit           = var.resolver_throttling_burst_limit
  throttling_rate_limit            = var.resolver_throttling_rate_limit

  # HEAD /{token} answers as GET without recording a click (openapi.yaml,
  # x-linoone-also-head).
  routes = {
    "GET /{token}" = {
      function_name      = module.resolve.function_name
      invoke_arn         = module.resolve.invoke_arn
      authorization_type = "NONE"
    }
    "HEAD /{token}" = {
      function_name      = module.resolve.function_name
      invoke_arn         = module.resolve.invoke_arn
      authorization_type = "NONE"
    }
    "GET /healthz" = {
      function_name      = module.resolve.function_name
      invoke_arn         = module.resolve.invoke_arn
      authorization_type = "NONE"
    }
  }

  custom_domain_name     = var.custom_domain_name
  custom_domain_routable = var.custom_domain_routable
  # With the cdn option the distribution serves the custom domain, not API Gateway.
  custom_domain_certificate_arn = var.cdn_enabled ? "" : var.custom_domain_certificate_arn
}

# Optional edge protection (off by default): CloudFront in front of the resolver with a
# WAF rate-based rule per client IP. Cost and the custom-domain interplay with
# `linoone discover`: terraform/README.md, "Edge protection (cdn)".
module "cdn" {
  source = "../cdn"
  count  = var.cdn_enabled ? 1 : 0

  providers = {
    aws           = aws
    aws.us_east_1 = aws.us_east_1
    random        = random
  }

  name                     = "${local.name}-resolver"
  resolver_api_endpoint    = module.resolver_api.api_endpoint
  rate_limit_per_5_minutes = var.cdn_rate_limit_per_5_minutes
  custom_domain_name       = var.custom_domain_name
  certificate_arn          = var.cdn_certificate_arn
}

module "management_api" {
  source = "../http-api"

  name               = "${local.name}-management"
  log_retention_days = var.log_retention_days
  # One second above the issue function's timeout, within API Gateway's 30 s.
  integration_timeout_milliseconds = min(30000, (var.api_timeout_seconds + 1) * 1000)
  throttling_burst_limit           = var.management_throttling_burst_limit
  throttling_rate_limit            = var.management_throttling_rate_limit

  # Issuance, inspection and stats are SigV4-signed (AWS_IAM); the liveness probe is
  # public (it reveals nothing and load balancers/monitors cannot sign), and so is the
  # contract: GET /openapi.yaml and its HTML reference GET /docs (NONE: reachable from
  # the internet, as every route of an HTTP API is). Each public GET has its HEAD
  # twin, unsigned too: the server answers it as GET without a body, as locally.
  routes = {
    "POST /shorten" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "POST /shorten/batch" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /links/{token}/stats" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /links/{token}" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /links" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /links/{token}/qr" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /healthz" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
    "HEAD /healthz" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
    "GET /openapi.yaml" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
    "HEAD /openapi.yaml" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
    "GET /docs" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
    "HEAD /docs" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
  }
}

# --- alarms --------------------------------------------------------------------------

module "alarms" {
  source = "../alarms"

  name_prefix           = local.name
  environment           = var.environment
  metrics_namespace     = var.metrics_namespace
  click_dlq_name        = module.click_dlq.queue_name
  click_deadletter_name = module.click_dlq.deadletter_name
  resolver_api_id       = module.resolver_api.api_id
  management_api_id     = module.management_api.api_id
  alarm_sns_topic_arn   = var.alarm_sns_topic_arn

  # p99 well inside each function's timeout: the redirect's budget is a Persist
  # lookup plus the click budget; issuance adds an ingest.
  duration_p99_threshold_ms = {
    resolve = 1000
    issue   = 3000
  }
  reserved_concurrency = {
    resolve = module.resolve.reserved_concurrent_executions
  }

  function_names = {
    issue   = module.issue.function_name
    resolve = module.resolve.function_name
    replay  = module.replay.function_name
  }
}

# --- dashboard and saved log queries ---------------------------------------------------

module "dashboard" {
  source = "../dashboard"

  name                  = local.name
  environment           = var.environment
  metrics_namespace     = var.metrics_namespace
  resolver_api_id       = module.resolver_api.api_id
  management_api_id     = module.management_api.api_id
  click_dlq_name        = module.click_dlq.queue_name
  click_deadletter_name = module.click_dlq.deadletter_name
  alarm_arns            = values(module.alarms.alarm_arns)

  function_names = {
    issue   = module.issue.function_name
    resolve = module.resolve.function_name
    replay  = module.replay.function_name
  }
  log_group_names = {
    issue   = module.issue.log_group_name
    resolve = module.resolve.log_group_name
    replay  = module.replay.log_group_name
  }
  access_log_group_names = {
    resolver   = module.resolver_api.access_log_group_name
    management = module.management_api.access_log_group_name
  }
  reserved_concurrency = {
    resolve = module.resolve.reserved_concurrent_executions
  }
}
