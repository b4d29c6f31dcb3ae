output "queue_url" {
  description = "URL of the click DLQ (the resolver's `LINOONE_CLICK_DLQ_URL`)."
  value       = aws_sqs_queue.this.url
}

output "queue_arn" {
  description = "ARN of the click DLQ."
  value       = aws_sqs_queue.this.arn
}

output "queue_name" {
  description = "Name of the click DLQ (the `QueueName` dimension of its metrics)."
  value       = aws_sqs_queue.this.name
}

output "deadletter_url" {
  description = "URL of the click DLQ's deadletter queue."
  value       = aws_sqs_queue.deadletter.url
}

output "deadletter_arn" {
  description = "ARN of the click DLQ's deadletter queue."
  value       = aws_sqs_queue.deadletter.arn
}

output "deadletter_name" {
  description = "Name of the deadletter queue (the `QueueName` dimension of its metrics)."
  value       = aws_sqs_queue.deadletter.name
}

output "visibility_timeout_seconds" {
  description = "Visibility timeout of the click DLQ in seconds (at least 6 times the replay function's timeout)."
  value       = aws_sqs_queue.this.visibility_timeout_seconds
}

output "max_receive_count" {
  description = "maxReceiveCount of the click DLQ's redrive policy: receives × visibility timeout cover the message retention, so a click leaves for the deadletter queue only after its retention."
  value       = local.max_receive_count
}
