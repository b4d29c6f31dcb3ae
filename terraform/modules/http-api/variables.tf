variable "name" {
  description = "Name of the HTTP API; also names its access log group `/aws/apigateway/<name>/access`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,128}$", var.name))
    error_message = "The name must be 1-128 letters, digits, hyphens or underscores."
  }
}

variable "routes" {
  description = "Routes of the API keyed by route key (\"METHOD /path\", as in openapi.yaml). Each route targets a Lambda function (its `function_name` and `invoke_arn`) through an AWS_PROXY integration with payload format 2.0, and is authorized with `NONE` (public) or `AWS_IAM` (SigV4)."
  type = map(object({
    function_name      = string
    invoke_arn         = string
    authorization_type = string
  }))

  validation {
    condition     = length(var.routes) > 0
    error_message = "At least one route is required."
  }

  validation {
    condition     = alltrue([for key in keys(var.routes) : can(regex("^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /[^ ]*$", key))])
    error_message = "Route keys must be \"METHOD /path\" (the operations of openapi.yaml); catch-all routes such as $default or ANY are not used."
  }

  validation {
    condition     = alltrue([for route in values(var.routes) : contains(["NONE", "AWS_IAM"], route.authorization_type)])
    error_message = "authorization_type must be NONE or AWS_IAM."
  }
}

variable "throttling_burst_limit" {
  description = "Default route throttling burst limit (requests) of the $default stage."
  type        = number

  validation {
    condition     = var.throttling_burst_limit >= 0 && floor(var.throttling_burst_limit) == var.throttling_burst_limit
    error_message = "The burst limit must be a whole number >= 0."
  }
}

variable "throttling_rate_limit" {
  description = "Default route throttling rate limit (requests per second) of the $default stage."
  type        = number

  validation {
    condition     = var.throttling_rate_limit >= 0
    error_message = "The rate limit must be >= 0."
  }
}

variable "log_retention_days" {
  description = "Retention of the access log group, in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "The log retention must be one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)."
  }
}

variable "custom_domain_name" {
  description = "Custom domain (host name only, e.g. `s.example.com`) for the API; \"\" for none. Used only when `custom_domain_routable` is true."
  type        = string
  default     = ""

  validation {
    condition     = var.custom_domain_name == "" || can(regex("^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$", var.custom_domain_name))
    error_message = "custom_domain_name must be empty or a lower-case host name without scheme, port or path."
  }
}

variable "custom_domain_routable" {
  description = "True only when `linoone discover` proved DNS routes custom_domain_name to this API. The domain name and API mapping are created whenever a name and certificate are given (DNS needs their target); callers use the domain in short URLs only when this is true."
  type        = bool
  default     = false
}

variable "custom_domain_certificate_arn" {
  description = "ARN of the ACM certificate (same region as the API) covering custom_domain_name; required when the custom domain is used."
  type        = string
  default     = ""

  validation {
    condition     = var.custom_domain_certificate_arn == "" || can(regex("^arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[A-Za-z0-9-]+$", var.custom_domain_certificate_arn))
    error_message = "custom_domain_certificate_arn must be empty or an ACM certificate ARN."
  }
}

variable "integration_timeout_milliseconds" {
  description = "Timeout of the Lambda integrations in milliseconds (50-30000): set just above the functions' timeout, so a slow invocation fails at the function's budget instead of API Gateway's default 30 s."
  type        = number

  validation {
    condition     = var.integration_timeout_milliseconds >= 50 && var.integration_timeout_milliseconds <= 30000 && floor(var.integration_timeout_milliseconds) == var.integration_timeout_milliseconds
    error_message = "The integration timeout must be a whole number of milliseconds between 50 and 30000."
  }
}
