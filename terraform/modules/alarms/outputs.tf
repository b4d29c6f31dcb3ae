output "alarm_names" {
  description = "Names of all alarms, keyed by alarm label (e.g. `click-deadletter-depth`, `resolve-errors`)."
  value       = merge({ for key, alarm in aws_cloudwatch_metric_alarm.this : key => alarm.alarm_name }, { "resolver-4xx-rate" = aws_cloudwatch_metric_alarm.resolver_4xx_rate.alarm_name })
}

output "alarm_arns" {
  description = "ARNs of all alarms, keyed by alarm label."
  value       = merge({ for key, alarm in aws_cloudwatch_metric_alarm.this : key => alarm.arn }, { "resolver-4xx-rate" = aws_cloudwatch_metric_alarm.resolver_4xx_rate.arn })
}
