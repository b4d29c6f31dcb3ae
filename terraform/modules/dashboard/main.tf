# The environment's CloudWatch dashboard and its saved Logs Insights queries: what a
# platform team opens after `terraform apply` ("how is it doing?"). Every metric a
# widget names is one the stack's resources produce (AWS/ApiGateway, AWS/Lambda,
# AWS/SQS) or one the functions emit as EMF (internal/aws/metrics); dashboard_test.go
# checks both, so a renamed metric cannot leave an empty graph.

data "aws_region" "current" {}

locals {
  region = data.aws_region.current.name
  labels = sort(keys(var.function_names))

  # One row per function of a Lambda metric: [namespace, metric, dimension, value, options].
  per_function = {
    for metric, stat in { Duration = "p99", Errors = "Sum", Throttles = "Sum", ConcurrentExecutions = "Maximum" } :
    metric => [for label in local.labels : ["AWS/Lambda", metric, "FunctionName", var.function_names[label], { stat = stat, label = label }]]
  }


  widget = { width = 8, height = 6 }

  widgets = [
    {
      type = "metric", x = 0, y = 0, width = local.widget.width, height = local.widget.height
      properties = {
        title = "Resolver API: requests, 4xx, 5xx", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        metrics = [
          ["AWS/ApiGateway", "Count", "ApiId", var.resolver_api_id, { label = "requests" }],
          ["AWS/ApiGateway", "4xx", "ApiId", var.resolver_api_id, { label = "4xx (429 throttles included)" }],
          ["AWS/ApiGateway", "5xx", "ApiId", var.resolver_api_id, { label = "5xx" }],
        ]
      }
    },
    {
      type = "metric", x = 8, y = 0, width = local.widget.width, height = local.widget.height
      properties = {
        title = "Resolver API: latency (ms)", region = local.region, view = "timeSeries", period = 60
        metrics = [
          ["AWS/ApiGateway", "Latency", "ApiId", var.resolver_api_id, { stat = "p50", label = "p50" }],
          ["AWS/ApiGateway", "Latency", "ApiId", var.resolver_api_id, { stat = "p99", label = "p99" }],
        ]
      }
    },
    {
      type = "metric", x = 16, y = 0, width = local.widget.width, height = local.widget.height
      properties = {
        title = "Management API: requests, 4xx, 5xx", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        metrics = [
          ["AWS/ApiGateway", "Count", "ApiId", var.management_api_id, { label = "requests" }],
          ["AWS/ApiGateway", "4xx", "ApiId", var.management_api_id, { label = "4xx" }],
          ["AWS/ApiGateway", "5xx", "ApiId", var.management_api_id, { label = "5xx" }],
        ]
      }
    },
    {
      type       = "metric", x = 0, y = 6, width = 6, height = local.widget.height
      properties = { title = "Functions: duration p99 (ms)", region = local.region, view = "timeSeries", period = 60, metrics = local.per_function.Duration }
    },
    {
      type       = "metric", x = 6, y = 6, width = 6, height = local.widget.height
      properties = { title = "Functions: errors", region = local.region, view = "timeSeries", period = 60, metrics = local.per_function.Errors }
    },
    {
      type       = "metric", x = 12, y = 6, width = 6, height = local.widget.height
      properties = { title = "Functions: throttles", region = local.region, view = "timeSeries", period = 60, metrics = local.per_function.Throttles }
    },
    {
      type = "metric", x = 18, y = 6, width = 6, height = local.widget.height
      properties = {
        title = "Functions: concurrent executions", region = local.region, view = "timeSeries", period = 60, metrics = local.per_function.ConcurrentExecutions
        annotations = {
          horizontal = [for label, reserved in var.reserved_concurrency : { label = "${label} reserved", value = reserved } if reserved > 0]
        }
      }
    },
    {
      type = "metric", x = 0, y = 12, width = local.widget.width, height = local.widget.height
      properties = {
        title   = "Click publishing (resolver)", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        metrics = [for name in ["FactsPublished", "FactsDeadLettered", "FactsBuffered", "FactsLostToLog", "FactsDropped"] : [var.metrics_namespace, name, "Environment", var.environment, { label = name }]]
      }
    },
    {
      type = "metric", x = 8, y = 12, width = local.widget.width, height = local.widget.height
      properties = {
        title = "Click DLQ and deadletter queue", region = local.region, view = "timeSeries", period = 60, stat = "Maximum"
        metrics = [
          ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", var.click_dlq_name, { label = "click DLQ depth" }],
          ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", var.click_dlq_name, { label = "oldest click (s)", yAxis = "right" }],
          ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", var.click_deadletter_name, { label = "deadletter depth" }],
        ]
      }
    },
    {
      type = "metric", x = 16, y = 12, width = local.widget.width, height = local.widget.height
      properties = {
        title   = "Replay outcomes", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        metrics = [for name in ["FactsReplayed", "FactsReplayFailed"] : [var.metrics_namespace, name, "Environment", var.environment, { label = name }]]
      }
    },
    {
      type = "metric", x = 0, y = 18, width = local.widget.width, height = local.widget.height
      properties = {
        title   = "Screening (deny list)", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        metrics = [for name in ["TargetsBlocked", "LinksBlockedServed", "DenyListUnreadable"] : [var.metrics_namespace, name, "Environment", var.environment, { label = name }]]
      }
    },
    {
      type       = "alarm", x = 8, y = 18, width = 16, height = local.widget.height
      properties = { title = "Alarms", alarms = var.alarm_arns }
    },
    {
      # Empty while the resolver runs without a hot set (LINOONE_CACHE_SIZE=0).
      type = "metric", x = 0, y = 24, width = local.widget.width, height = local.widget.height
      properties = {
        title = "Hot set hit rate (%)", region = local.region, view = "timeSeries", period = 60, stat = "Sum"
        yAxis = { left = { min = 0, max = 100 } }
        metrics = [
          [var.metrics_namespace, "HotSetHits", "Environment", var.environment, { id = "hits", visible = false }],
          [var.metrics_namespace, "HotSetMisses", "Environment", var.environment, { id = "misses", visible = false }],
          [{ id = "rate", expression = "100 * hits / (hits + misses)", label = "hit rate" }],
        ]
      }
    },
    {
      # Lookups are the redirects the hot set missed; ingests are issuance's writes.
      type = "metric", x = 8, y = 24, width = 16, height = local.widget.height
      properties = {
        title = "Persist call latency (ms)", region = local.region, view = "timeSeries", period = 60
        metrics = [
          for p in setproduct(["lookup", "ingest", "query"], ["p50", "p99"]) :
          [var.metrics_namespace, "PersistLatency", "Environment", var.environment, "Operation", p[0], { stat = p[1], label = "${p[0]} ${p[1]}" }]
        ]
      }
    },
  ]
}

resource "aws_cloudwatch_dashboard" "this" {
  dashboard_name = var.name
  dashboard_body = jsonencode({ widgets = local.widgets })
}

# Saved Logs Insights queries (Logs Insights, "Queries" in the console). The field
# names are the keys the functions log (slog JSON: time, level, msg, …) and the keys
# of the APIs' access log format; dashboard_test.go checks each against the code.
locals {
  queries = {
    "clicks-dead-lettered" = {
      log_groups = [var.log_group_names.resolve]
      query      = <<-EOT
        fields @timestamp, msg, idempotency_key, err, publish_err, dlq_err
        | filter msg = "click fact dead-lettered" or msg = "click facts buffered in memory: publish and dead-letter both failed"
        | sort @timestamp desc
        | limit 200
      EOT
    }
    "failed-redirects" = {
      log_groups = [var.access_log_group_names.resolver, var.log_group_names.resolve]
      query      = <<-EOT
        fields @timestamp, status, route_key, path, integration_status, integration_error, error_message, level, msg, err
        | filter status like /^5/ or level = "ERROR"
        | sort @timestamp desc
        | limit 200
      EOT
    }
    "slowest-persist-bound-requests" = {
      log_groups = [var.access_log_group_names.resolver, var.access_log_group_names.management]
      query      = <<-EOT
        fields @timestamp, route_key, path, status, integration_latency, response_latency_ms
        | filter ispresent(integration_latency)
        | sort integration_latency desc
        | limit 50
      EOT
    }
    "token-history" = {
      log_groups = concat([for label in local.labels : var.log_group_names[label]], [var.access_log_group_names.resolver, var.access_log_group_names.management])
      query      = <<-EOT
        fields @timestamp, @log, level, msg, status, route_key, path, short_url_token, idempotency_key
        | filter short_url_token = "XXXXXXXXXX" or path like /XXXXXXXXXX/ or @message like /XXXXXXXXXX/
        | sort @timestamp asc
        | limit 500
      EOT
    }
  }
}

resource "aws_cloudwatch_query_definition" "this" {
  for_each = local.queries

  name            = "${var.name}/${each.key}"
  log_group_names = each.value.log_groups
  query_string    = each.value.query
}
