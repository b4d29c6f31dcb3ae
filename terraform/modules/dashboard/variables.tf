variable "name" {
  description = "Name of the dashboard (e.g. `linoone-prod`); also the folder of the saved queries (`<name>/<query>`)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,255}$", var.name))
    error_message = "The name must be 1-255 letters, digits, hyphens or underscores."
  }
}

variable "environment" {
  description = "Environment name: the `Environment` dimension of the functions' EMF metrics."
  type        = string
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the functions' EMF metrics (`LINOONE_METRICS_NAMESPACE`)."
  type        = string
}

variable "function_names" {
  description = "Lambda function names keyed by label (issue, resolve, replay)."
  type        = map(string)
}

variable "log_group_names" {
  description = "Log groups of the functions keyed by the labels of function_names."
  type        = map(string)
}

variable "access_log_group_names" {
  description = "Access log groups of the APIs: { resolver = …, management = … }."
  type        = object({ resolver = string, management = string })
}

variable "reserved_concurrency" {
  description = "Reserved concurrency keyed by function label; values above 0 are drawn as lines on the concurrency widget."
  type        = map(number)
}

variable "resolver_api_id" {
  description = "ID of the resolver HTTP API (the `ApiId` dimension)."
  type        = string
}

variable "management_api_id" {
  description = "ID of the management HTTP API (the `ApiId` dimension)."
  type        = string
}

variable "click_dlq_name" {
  description = "Name of the click DLQ (the `QueueName` dimension)."
  type        = string
}

variable "click_deadletter_name" {
  description = "Name of the click DLQ's deadletter queue (the `QueueName` dimension)."
  type        = string
}

variable "alarm_arns" {
  description = "ARNs of the alarms the alarm widget shows."
  type        = list(string)
}
