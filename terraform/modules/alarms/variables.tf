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
  description = "ID of the resolver HTTP API, whose 5xx responses and 4xx rate alarm."
  type        = string
}

variable "management_api_id" {
  description = "ID of the management HTTP API, whose 5xx responses alarm."
  type        = string
}

variable "duration_p99_threshold_ms" {
  description = "Alarm when a function's p99 duration (ms) stays above this, keyed by the labels of function_names (e.g. { resolve = 1000, issue = 3000 })."
  type        = map(number)

  validation {
    condition     = alltrue([for v in values(var.duration_p99_threshold_ms) : v > 0])
    error_message = "Duration thresholds must be above 0 ms."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrency of functions, keyed by the labels of function_names; a function with a value above 0 alarms when its ConcurrentExecutions reach concurrency_alarm_ratio of it (-1: no reservation, no alarm)."
  type        = map(number)
}

variable "concurrency_alarm_ratio" {
  description = "Share of a function's reserved concurrency at which its concurrency alarm fires."
  type        = number
  default     = 0.8

  validation {
    condition     = var.concurrency_alarm_ratio > 0 && var.concurrency_alarm_ratio < 1
    error_message = "The ratio must be between 0 and 1."
  }
}

variable "resolver_4xx_rate_threshold_percent" {
  description = "Alarm when more than this percentage of the resolver's answers are 4xx (429 throttles included)."
  type        = number
  default     = 10

  validation {
    condition     = var.resolver_4xx_rate_threshold_percent > 0 && var.resolver_4xx_rate_threshold_percent <= 100
    error_message = "The threshold must be a percentage above 0."
  }
}

variable "resolver_4xx_min_requests" {
  description = "The 4xx rate counts only minutes with more than this many resolver requests, so that a handful of probes does not alarm."
  type        = number
  default     = 50

  validation {
    condition     = var.resolver_4xx_min_requests >= 0
    error_message = "The minimum must be >= 0."
  }
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
  description = "Alarm when the resolver API answers more than this many 5xx responses a minute (3 of 5 minutes)."
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
