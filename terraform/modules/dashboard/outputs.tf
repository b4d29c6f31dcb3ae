output "dashboard_name" {
  description = "Name of the CloudWatch dashboard."
  value       = aws_cloudwatch_dashboard.this.dashboard_name
}

output "dashboard_url" {
  description = "Console URL of the dashboard."
  value       = "https://${local.region}.console.aws.amazon.com/cloudwatch/home?region=${local.region}#dashboards:name=${aws_cloudwatch_dashboard.this.dashboard_name}"
}

output "query_names" {
  description = "Names of the saved Logs Insights queries, keyed by query label."
  value       = { for key, q in aws_cloudwatch_query_definition.this : key => q.name }
}
