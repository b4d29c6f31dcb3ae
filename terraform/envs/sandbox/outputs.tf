output "resolver_url" {
  description = "Resolver base URL that short URLs start with: https://<custom_domain_name> when proven routable, otherwise the resolver API endpoint."
  value       = module.stack.resolver_url
}

output "resolver_api_endpoint" {
  description = "Default endpoint of the resolver HTTP API (what resolver_url falls back to)."
  value       = module.stack.resolver_api_endpoint
}

output "resolver_custom_domain_target" {
  description = "Target domain name the custom domain's DNS record must point at; \"\" while no custom domain is created."
  value       = module.stack.resolver_custom_domain_target
}

output "management_url" {
  description = "Endpoint of the SigV4-signed management HTTP API (POST /shorten, POST /shorten/batch, GET /links, GET /links/{token}, GET /links/{token}/qr, GET /links/{token}/stats; GET /healthz, GET /openapi.yaml and GET /docs unsigned)."
  value       = module.stack.management_url
}

output "issue_function_name" {
  description = "Name of the issue Lambda function."
  value       = module.stack.issue_function_name
}

output "resolve_function_name" {
  description = "Name of the resolve Lambda function."
  value       = module.stack.resolve_function_name
}

output "replay_function_name" {
  description = "Name of the replay Lambda function."
  value       = module.stack.replay_function_name
}

output "click_dlq_url" {
  description = "URL of the click DLQ."
  value       = module.stack.click_dlq_url
}

output "click_deadletter_url" {
  description = "URL of the click DLQ's deadletter queue."
  value       = module.stack.click_deadletter_url
}

output "event_bus_name" {
  description = "Name of the engagement event bus the click facts go to."
  value       = module.stack.event_bus_name
}

output "event_bus_arn" {
  description = "ARN of the engagement event bus the click facts go to."
  value       = module.stack.event_bus_arn
}

output "dashboard_url" {
  description = "Console URL of the environment's CloudWatch dashboard (open it after apply: terraform/README.md, \"After apply\")."
  value       = module.stack.dashboard_url
}

output "cdn_domain_name" {
  description = "Domain name of the CloudFront distribution in front of the resolver (the custom domain's DNS target when cdn_enabled); \"\" without the cdn option."
  value       = module.stack.cdn_domain_name
}
