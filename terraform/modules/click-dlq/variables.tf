variable "name" {
  description = "Name of the click DLQ; its deadletter queue is named `<name>-deadletter`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,69}$", var.name))
    error_message = "The name must be 1-69 letters, digits, hyphens or underscores (80-character SQS limit minus the \"-deadletter\" suffix)."
  }
}

variable "replay_function_name" {
  description = "Name of the replay Lambda function that consumes the click DLQ."
  type        = string
}

variable "replay_timeout_seconds" {
  description = "Timeout of the replay function in seconds; the click DLQ's visibility timeout is at least 6 times this (the AWS recommendation for Lambda event sources)."
  type        = number

  validation {
    condition     = var.replay_timeout_seconds >= 1 && var.replay_timeout_seconds <= 900 && floor(var.replay_timeout_seconds) == var.replay_timeout_seconds
    error_message = "The replay timeout must be a whole number of seconds between 1 and 900 (the Lambda maximum)."
  }
}

variable "message_retention_seconds" {
  description = "Message retention of the click DLQ in seconds (default 4 days)."
  type        = number
  default     = 345600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "SQS message retention must be between 60 and 1209600 seconds."
  }
}

variable "deadletter_message_retention_seconds" {
  description = "Message retention of the deadletter queue in seconds (default 14 days, the SQS maximum). Must be longer than the click DLQ's: a redriven message keeps its original enqueue time."
  type        = number
  default     = 1209600

  validation {
    condition     = var.deadletter_message_retention_seconds >= 60 && var.deadletter_message_retention_seconds <= 1209600
    error_message = "SQS message retention must be between 60 and 1209600 seconds."
  }
}

variable "batch_size" {
  description = "Maximum number of messages the event source mapping hands the replay function per invocation."
  type        = number
  default     = 10

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000 && floor(var.batch_size) == var.batch_size
    error_message = "The batch size must be a whole number between 1 and 10000."
  }
}

variable "maximum_batching_window_seconds" {
  description = "Maximum time in seconds the event source mapping gathers messages before invoking the replay function (must be at least 1 when batch_size is above 10)."
  type        = number
  default     = 0

  validation {
    condition     = var.maximum_batching_window_seconds >= 0 && var.maximum_batching_window_seconds <= 300 && floor(var.maximum_batching_window_seconds) == var.maximum_batching_window_seconds
    error_message = "The batching window must be a whole number of seconds between 0 and 300."
  }
}

variable "maximum_concurrency" {
  description = "Most concurrent replay invocations the event source mapping starts (2-1000): replay shares the account's concurrency and the bus with the resolver."
  type        = number

  validation {
    condition     = var.maximum_concurrency >= 2 && var.maximum_concurrency <= 1000 && floor(var.maximum_concurrency) == var.maximum_concurrency
    error_message = "maximum_concurrency must be a whole number between 2 and 1000."
  }
}
