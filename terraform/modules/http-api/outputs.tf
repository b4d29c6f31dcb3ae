output "api_id" {
  description = "ID of the HTTP API (the `ApiId` dimension of its CloudWatch metrics)."
  value       = aws_apigatewayv2_api.this.id
}

output "api_endpoint" {
  description = "Default endpoint of the API, `https://<api-id>.execute-api.<region>.amazonaws.com` (no trailing slash)."
  value       = aws_apigatewayv2_api.this.api_endpoint
}

output "execution_arn" {
  description = "Execution ARN of the API, the prefix of `execute-api:Invoke` resource ARNs."
  value       = aws_apigatewayv2_api.this.execution_arn
}

output "stage_invoke_url" {
  description = "Invoke URL of the $default stage."
  value       = aws_apigatewayv2_stage.this.invoke_url
}

output "custom_domain_target" {
  description = "Regional target domain name that the custom domain's DNS record (CNAME or alias) must point at; \"\" when no custom domain is created."
  value       = try(aws_apigatewayv2_domain_name.this[0].domain_name_configuration[0].target_domain_name, "")
}

output "custom_domain_hosted_zone_id" {
  description = "Route 53 hosted zone ID of the custom domain's target, for an alias record; \"\" when no custom domain is created."
  value       = try(aws_apigatewayv2_domain_name.this[0].domain_name_configuration[0].hosted_zone_id, "")
}

output "access_log_group_name" {
  description = "Name of the API's access log group (one JSON line per request; the saved Logs Insights queries read it)."
  value       = aws_cloudwatch_log_group.access.name
}
