output "function_name" {
  description = "Name of the Lambda function. Depends on the role policy, so anything wired to it (event source mappings, API permissions) is created after the function may use its permissions."
  value       = aws_lambda_function.this.function_name

  depends_on = [aws_iam_role_policy.this]
}

output "function_arn" {
  description = "ARN of the Lambda function."
  value       = aws_lambda_function.this.arn
}

output "invoke_arn" {
  description = "ARN API Gateway uses to invoke the function (the integration URI)."
  value       = aws_lambda_function.this.invoke_arn
}

output "timeout_seconds" {
  description = "Function timeout in seconds (the click DLQ sizes its visibility timeout from the replay function's)."
  value       = var.timeout_seconds
}

output "role_name" {
  description = "Name of the function's IAM execution role."
  value       = aws_iam_role.this.name
}

output "log_group_name" {
  description = "Name of the function's CloudWatch log group."
  value       = aws_cloudwatch_log_group.this.name
}

output "reserved_concurrent_executions" {
  description = "Concurrency reserved for the function; -1 for none (the concurrency alarm compares with it)."
  value       = var.reserved_concurrent_executions
}
