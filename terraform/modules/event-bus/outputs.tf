output "name" {
  description = "Name of the event bus (created or imported)."
  value       = one(concat(aws_cloudwatch_event_bus.this[*].name, data.aws_cloudwatch_event_bus.this[*].name))
}

output "arn" {
  description = "ARN of the event bus (created or imported): the resource of `events:PutEvents` grants and the functions' `LINOONE_EVENT_BUS`."
  value       = one(concat(aws_cloudwatch_event_bus.this[*].arn, data.aws_cloudwatch_event_bus.this[*].arn))
}

output "created" {
  description = "True when this stack created the bus (sandbox), false when it imported the shared bus."
  value       = var.create_bus
}
