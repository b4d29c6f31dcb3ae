# Optional edge protection of the public resolver (the stack's `cdn` option): a
# CloudFront distribution in front of the resolver HTTP API, with a WAF web ACL whose
# rate-based rule limits each client IP. HTTP APIs cannot attach WAF themselves, and
# their stage throttle is shared by every visitor, so one client could spend it all.
# Nothing is cached: every click must reach the resolver to be counted.

locals {
  # The API's default endpoint without its scheme: the distribution's origin.
  origin_domain = trimprefix(var.resolver_api_endpoint, "https://")
  aliases       = var.custom_domain_name == "" ? [] : [var.custom_domain_name]
  # The header holding the origin secret: the resolve function's
  # awswire.OriginVerifyHeader (a wiring test holds them equal).
  origin_verify_header = "X-Linoone-Origin-Verify"
}

# The origin secret: CloudFront adds it to every request it sends the resolver API
# (local.origin_verify_header), and the resolve function trusts CloudFront-Viewer-Address
# only on a request that carries it. The execute-api endpoint stays reachable
# directly, so without it any client could choose the visitor address of its own
# clicks. Drawn once and kept in state (sensitive); `terraform apply -replace` of
# this resource rotates it (CloudFront and the function follow in the same apply).
resource "random_password" "origin_verify" {
  length  = 48
  special = false
}

# AWS managed policies: no caching, and every viewer header, cookie and query string
# except Host forwarded (API Gateway routes by its own host name), with CloudFront's
# own headers, CloudFront-Viewer-Address among them.
data "aws_cloudfront_cache_policy" "disabled" {
  name = "Managed-CachingDisabled"
}

data "aws_cloudfront_origin_request_policy" "all_viewer_except_host" {
  name = "Managed-AllViewerExceptHostHeader"
}

resource "aws_wafv2_web_acl" "this" {
  provider = aws.us_east_1

  name  = var.name
  scope = "CLOUDFRONT"

  default_action {
    allow {}
  }

  rule {
    name     = "rate-per-client-ip"
    priority = 0

    action {
      block {}
    }

    statement {
      rate_based_statement {
        limit              = var.rate_limit_per_5_minutes
        aggregate_key_type = "IP"
      }
    }

    visibility_config {
      cloudwatch_metrics_enabled = true
      metric_name                = "${var.name}-rate-per-client-ip"
      sampled_requests_enabled   = true
    }
  }

  visibility_config {
    cloudwatch_metrics_enabled = true
    metric_name                = var.name
    sampled_requests_enabled   = true
  }
}

resource "aws_cloudfront_distribution" "this" {
  enabled         = true
  comment         = "${var.name}: resolver behind WAF (rate limit per client IP)"
  aliases         = local.aliases
  price_class     = var.price_class
  is_ipv6_enabled = true
  http_version    = "http2and3"
  web_acl_id      = aws_wafv2_web_acl.this.arn

  origin {
    origin_id   = "resolver"
    domain_name = local.origin_domain

    custom_header {
      name  = local.origin_verify_header
      value = random_password.origin_verify.result
    }

    custom_origin_config {
      http_port              = 80
      https_port             = 443
      origin_protocol_policy = "https-only"
      origin_ssl_protocols   = ["TLSv1.2"]
    }
  }

  default_cache_behavior {
    target_origin_id         = "resolver"
    viewer_protocol_policy   = "redirect-to-https"
    allowed_methods          = ["GET", "HEAD"]
    cached_methods           = ["GET", "HEAD"]
    cache_policy_id          = data.aws_cloudfront_cache_policy.disabled.id
    origin_request_policy_id = data.aws_cloudfront_origin_request_policy.all_viewer_except_host.id
    compress                 = true
  }

  restrictions {
    geo_restriction {
      restriction_type = "none"
    }
  }

  viewer_certificate {
    cloudfront_default_certificate = var.certificate_arn == ""
    acm_certificate_arn            = var.certificate_arn == "" ? null : var.certificate_arn
    ssl_support_method             = var.certificate_arn == "" ? null : "sni-only"
    minimum_protocol_version       = var.certificate_arn == "" ? "TLSv1" : "TLSv1.2_2021"
  }

  lifecycle {
    precondition {
      condition     = var.custom_domain_name == "" || var.certificate_arn != ""
      error_message = "A custom domain on the CDN needs cdn_certificate_arn: an ACM certificate in us-east-1 covering it."
    }
  }
}
