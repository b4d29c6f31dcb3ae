variable "name" {
  description = "Name of the web ACL and prefix of its metrics, e.g. `linoone-prod-resolver`."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,128}$", var.name))
    error_message = "The name must be 1-128 letters, digits, hyphens or underscores."
  }
}

variable "resolver_api_endpoint" {
  description = "Default endpoint of the resolver HTTP API (`https://<api-id>.execute-api.<region>.amazonaws.com`): the distribution's origin."
  type        = string

  validation {
    condition     = can(regex("^https://[a-z0-9.-]+$", var.resolver_api_endpoint))
    error_message = "resolver_api_endpoint must be https://<host> without a path."
  }
}

variable "rate_limit_per_5_minutes" {
  description = "Requests one client IP may make in any 5 minutes before WAF blocks it (403) until its rate falls (WAF's minimum is 10)."
  type        = number

  validation {
    condition     = var.rate_limit_per_5_minutes >= 10 && var.rate_limit_per_5_minutes <= 2000000000 && floor(var.rate_limit_per_5_minutes) == var.rate_limit_per_5_minutes
    error_message = "The rate limit must be a whole number between 10 and 2000000000."
  }
}

variable "custom_domain_name" {
  description = "Custom domain the distribution answers for (an alias), \"\" for none; DNS must point it at `domain_name`."
  type        = string
  default     = ""
}

variable "certificate_arn" {
  description = "ACM certificate in us-east-1 covering custom_domain_name (CloudFront's region for certificates); \"\" for the default *.cloudfront.net certificate."
  type        = string
  default     = ""

  validation {
    condition     = var.certificate_arn == "" || can(regex("^arn:aws[a-z-]*:acm:us-east-1:[0-9]{12}:certificate/[A-Za-z0-9-]+$", var.certificate_arn))
    error_message = "certificate_arn must be empty or an ACM certificate ARN in us-east-1."
  }
}

variable "price_class" {
  description = "CloudFront price class: which edge locations serve visitors (PriceClass_100 is the cheapest)."
  type        = string
  default     = "PriceClass_100"

  validation {
    condition     = contains(["PriceClass_100", "PriceClass_200", "PriceClass_All"], var.price_class)
    error_message = "price_class must be PriceClass_100, PriceClass_200 or PriceClass_All."
  }
}
