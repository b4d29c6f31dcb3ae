output "domain_name" {
  description = "Domain name of the distribution (`dxxxx.cloudfront.net`): the target of the custom domain's DNS record."
  value       = aws_cloudfront_distribution.this.domain_name
}

output "hosted_zone_id" {
  description = "Route 53 hosted zone ID of CloudFront, for an alias record."
  value       = aws_cloudfront_distribution.this.hosted_zone_id
}

output "url" {
  description = "https://<distribution domain>: the resolver's public entry point through WAF."
  value       = "https://${aws_cloudfront_distribution.this.domain_name}"
}

output "web_acl_arn" {
  description = "ARN of the WAF web ACL with the per-client-IP rate rule."
  value       = aws_wafv2_web_acl.this.arn
}

output "origin_verify_secret" {
  description = "The origin secret CloudFront sends in X-Linoone-Origin-Verify: the resolve function's LINOONE_ORIGIN_VERIFY_SECRET. Sensitive."
  value       = random_password.origin_verify.result
  sensitive   = true
}
