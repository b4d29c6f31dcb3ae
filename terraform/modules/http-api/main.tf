# An API Gateway v2 HTTP API: a $default stage with auto-deploy, access logs and
# default throttling, one route per openapi.yaml operation, one AWS_PROXY (payload
# 2.0) integration and invoke permission per Lambda function, and an optional
# custom domain created only once discovery proved DNS routes it here.

locals {
  # function name => invoke ARN; one integration and one permission per function,
  # however many routes it serves.
  functions = {
    for function_name, invoke_arns in { for key, route in var.routes : route.function_name => route.invoke_arn... } :
    function_name => invoke_arns[0]
  }

  # "GET /links/{token}" => "GET/links/*": the method and path part of the
  # execute-api ARN of a route, a path parameter matching any value.
  route_arn_paths = {
    for key in keys(var.routes) : key => replace(replace(key, " /", "/"), "/\\{[^}]+\\}/", "*")
  }

  # The domain name and its mapping exist as soon as a name and a certificate are
  # given, so the DNS record that discovery asks for has a target to point at
  # (resolver_custom_domain_target). Short URLs use the domain only once discovery
  # has proved it routable (custom_domain_routable, in the environment stacks).
  custom_domain_enabled = var.custom_domain_name != "" && var.custom_domain_certificate_arn != ""
}

resource "aws_apigatewayv2_api" "this" {
  name          = var.name
  protocol_type = "HTTP"

  lifecycle {
    precondition {
      # Routable without a certificate is the CloudFront case: the distribution
      # terminates TLS and forwards the short-link path here, so no API Gateway
      # domain is created. Routable without a name is meaningless.
      condition     = !var.custom_domain_routable || var.custom_domain_name != ""
      error_message = "custom_domain_routable is true but custom_domain_name is empty: run linoone discover and pass the variables it prints."
    }
  }
}

resource "aws_cloudwatch_log_group" "access" {
  name              = "/aws/apigateway/${var.name}/access"
  retention_in_days = var.log_retention_days
}

resource "aws_apigatewayv2_stage" "this" {
  api_id      = aws_apigatewayv2_api.this.id
  name        = "$default"
  auto_deploy = true

  default_route_settings {
    throttling_burst_limit = var.throttling_burst_limit
    throttling_rate_limit  = var.throttling_rate_limit
  }

  # No headers are logged (never the Authorization header); the caller's IAM
  # principal is, which is where producer attribution belongs.
  access_log_settings {
    destination_arn = aws_cloudwatch_log_group.access.arn
    format = jsonencode({
      request_id          = "$context.requestId"
      request_time        = "$context.requestTime"
      source_ip           = "$context.identity.sourceIp"
      user_agent          = "$context.identity.userAgent"
      caller_arn          = "$context.identity.userArn"
      route_key           = "$context.routeKey"
      path                = "$context.path"
      status              = "$context.status"
      protocol            = "$context.protocol"
      response_length     = "$context.responseLength"
      response_latency_ms = "$context.responseLatency"
      integration_status  = "$context.integrationStatus"
      integration_latency = "$context.integrationLatency"
      integration_error   = "$context.integrationErrorMessage"
      error_message       = "$context.error.message"
    })
  }
}

resource "aws_apigatewayv2_integration" "this" {
  for_each = local.functions

  api_id                 = aws_apigatewayv2_api.this.id
  integration_type       = "AWS_PROXY"
  integration_method     = "POST"
  integration_uri        = each.value
  payload_format_version = "2.0"
  # Just above the function's own timeout: the function's budget decides, and a hung
  # invocation never holds the visitor for API Gateway's default 30 s.
  timeout_milliseconds = var.integration_timeout_milliseconds
}

resource "aws_apigatewayv2_route" "this" {
  for_each = var.routes

  api_id             = aws_apigatewayv2_api.this.id
  route_key          = each.key
  authorization_type = each.value.authorization_type
  target             = "integrations/${aws_apigatewayv2_integration.this[each.value.function_name].id}"
}

# One permission per route, naming its method and path: the function can be invoked
# through this API's routes only, never through a route added by hand. A path
# parameter ({token}) becomes `*`, which matches the route whichever form API Gateway
# puts in the source ARN; the stage is `*` (only $default exists).
resource "aws_lambda_permission" "this" {
  for_each = var.routes

  statement_id  = substr("AllowInvoke-${var.name}-${trim(replace(each.key, "/[^A-Za-z0-9]+/", "-"), "-")}", 0, 100)
  action        = "lambda:InvokeFunction"
  function_name = each.value.function_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = "${aws_apigatewayv2_api.this.execution_arn}/*/${local.route_arn_paths[each.key]}"
}

resource "aws_apigatewayv2_domain_name" "this" {
  count = local.custom_domain_enabled ? 1 : 0

  domain_name = var.custom_domain_name

  domain_name_configuration {
    certificate_arn = var.custom_domain_certificate_arn
    endpoint_type   = "REGIONAL"
    security_policy = "TLS_1_2"
  }
}

resource "aws_apigatewayv2_api_mapping" "this" {
  count = local.custom_domain_enabled ? 1 : 0

  api_id      = aws_apigatewayv2_api.this.id
  domain_name = aws_apigatewayv2_domain_name.this[0].id
  stage       = aws_apigatewayv2_stage.this.id
}
