variable "name" {
  description = "Function name. Also names the function's IAM role and its log group `/aws/lambda/<name>`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "The name must be 1-64 letters, digits, hyphens or underscores (the Lambda and IAM role name limits)."
  }
}

variable "filename" {
  description = "Path of the deployment package built by `make build` (`dist/<name>.zip`, holding the `bootstrap` executable). Relative paths are relative to the directory Terraform runs in."
  type        = string

  validation {
    condition     = endswith(var.filename, ".zip")
    error_message = "The filename must be the .zip archive produced by `make build`."
  }
}

variable "environment_variables" {
  description = "Environment variables of the function (its `LINOONE_*` configuration)."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for key in keys(var.environment_variables) : can(regex("^[A-Za-z][A-Za-z0-9_]*$", key))])
    error_message = "Environment variable names must start with a letter and contain only letters, digits and underscores."
  }
}

variable "timeout_seconds" {
  description = "Function timeout in seconds."
  type        = number
  default     = 10

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 900 && floor(var.timeout_seconds) == var.timeout_seconds
    error_message = "The timeout must be a whole number of seconds between 1 and 900."
  }
}

variable "memory_mb" {
  description = "Memory size in MB (CPU is allocated in proportion)."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_mb >= 128 && var.memory_mb <= 10240 && floor(var.memory_mb) == var.memory_mb
    error_message = "The memory size must be a whole number of MB between 128 and 10240."
  }
}

variable "log_retention_days" {
  description = "Retention of the function's log group `/aws/lambda/<name>`, in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "The log retention must be one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)."
  }
}

variable "policy_statements" {
  description = "Extra IAM Allow statements for the function's role, exactly what this function needs: each has a unique `sid`, explicit `actions` (no wildcards) and explicit `resources` (no \"*\"). Writing to its own log group is always granted."
  type = list(object({
    sid       = string
    actions   = list(string)
    resources = list(string)
  }))
  default = []

  validation {
    condition     = alltrue([for s in var.policy_statements : can(regex("^[A-Za-z0-9]+$", s.sid)) && s.sid != "WriteOwnLogs"])
    error_message = "Each statement sid must be alphanumeric and must not be WriteOwnLogs (reserved by the module)."
  }

  validation {
    condition     = length(distinct([for s in var.policy_statements : s.sid])) == length(var.policy_statements)
    error_message = "Statement sids must be unique."
  }

  validation {
    condition     = alltrue([for s in var.policy_statements : length(s.actions) > 0 && alltrue([for a in s.actions : can(regex("^[a-z0-9-]+:[A-Za-z0-9]+$", a))])])
    error_message = "Each statement needs at least one action, each written in full as service:Action (no wildcards)."
  }

  validation {
    condition     = alltrue([for s in var.policy_statements : length(s.resources) > 0 && !contains(s.resources, "*")])
    error_message = "Each statement needs explicit resources; \"*\" is not allowed."
  }
}

variable "reserved_concurrent_executions" {
  description = "Concurrency reserved for the function (and its ceiling); -1 for none, sharing the account's unreserved pool."
  type        = number
  default     = -1

  validation {
    condition     = var.reserved_concurrent_executions >= -1 && floor(var.reserved_concurrent_executions) == var.reserved_concurrent_executions
    error_message = "reserved_concurrent_executions must be -1 (none) or a whole number >= 0."
  }
}
