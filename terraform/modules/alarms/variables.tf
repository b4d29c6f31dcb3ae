variable "name_prefix" {
  description = "Prefix of every alarm name, e.g. `linoone-prod`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,200}$", var.name_prefix))
    error_message = "The name prefix must be 1-200 letters, digits, hyphens or underscores."
  }
}

variable "environment" {
  description = "Environment name: the value of the `Environment` dimension of the resolver's EMF metrics (its `LINOONE_ENVIRONMENT`)."
  type        = string

  validation {
    condition     = length(var.environment) > 0
    error_message = "The environment name must not be empty."
  }
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the metrics the functions emit as EMF (`LINOONE_METRICS_NAMESPACE`)."
  type        = string
  default     = "Linoone"

  validation {
    condition     = length(var.metrics_namespace) > 0 && !startswith(var.metrics_namespace, "AWS/")
    error_message = "The namespace must be non-empty and must not start with AWS/ (reserved)."
  }
}

variable "click_dlq_name" {
  description = "Name of the click DLQ."
  type        = string
}

variable "click_deadletter_name" {
  description = "Name of the click DLQ's deadletter queue; any message there alarms."
  type        = string
}

variable "function_names" {
  description = "Lambda functions whose Errors and Throttles alarm, keyed by a short static label used in alarm names (e.g. { resolve = \"linoone-prod-resolve\" })."
  type        = map(string)

  validation {
    condition     = alltrue([for key in keys(var.function_names) : can(regex("^[a-z0-9-]+$", key))])
    error_message = "Function labels must be lower-case letters, digits or hyphens."
  }
}

variable "resolver_api_id" {
  description = "ID of the resolver HTTP API, whose 5xx responses alarm."
  type        = string
}

variable "click_dlq_depth_threshold" {
  description = "Alarm when more than this many messages are visible in the click DLQ (replay is not keeping up or the bus is failing)."
  type        = number
  default     = 100

  validation {
    condition     = var.click_dlq_depth_threshold >= 0
    error_message = "The threshold must be >= 0."
  }
}

variable "click_dlq_age_threshold_seconds" {
  description = "Alarm when the oldest message in the click DLQ is older than this many seconds."
  type        = number
  default     = 900

  validation {
    condition     = var.click_dlq_age_threshold_seconds >= 60
    error_message = "The age threshold must be at least 60 seconds."
  }
}

variable "resolver_5xx_threshold" {
  description = "Alarm when the resolver API answers more than this many 5xx responses in 5 minutes."
  type        = number
  default     = 0

  validation {
    condition     = var.resolver_5xx_threshold >= 0
    error_message = "The threshold must be >= 0."
  }
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic notified when an alarm fires or recovers; \"\" for alarms without actions."
  type        = string
  default     = ""

  validation {
    condition     = var.alarm_sns_topic_arn == "" || can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+(\\.fifo)?$", var.alarm_sns_topic_arn))
    error_message = "alarm_sns_topic_arn must be empty or an SNS topic ARN."
  }
}
