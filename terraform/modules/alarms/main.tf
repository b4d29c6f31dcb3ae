# CloudWatch alarms of one environment: the click DLQ pair, every function's errors
# and throttles, resolver 5xx, and the fact-publish failures the resolver reports
# as CloudWatch EMF metrics (dead-lettered, buffered, lost to log, dropped). All alarms evaluate 5-minute periods and treat missing
# data as OK (EMF metrics only exist once something failed).

locals {
  period_seconds = 300
  actions        = var.alarm_sns_topic_arn == "" ? [] : [var.alarm_sns_topic_arn]

  queue_alarms = {
    "click-dlq-depth" = {
      description = "Click facts are piling up in the click DLQ: EventBridge publishing is failing or replay is not draining the queue."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      statistic   = "Maximum"
      threshold   = var.click_dlq_depth_threshold
      dimensions  = { QueueName = var.click_dlq_name }
    }
    "click-dlq-age" = {
      description = "The oldest click fact in the click DLQ has waited too long for replay."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateAgeOfOldestMessage"
      statistic   = "Maximum"
      threshold   = var.click_dlq_age_threshold_seconds
      dimensions  = { QueueName = var.click_dlq_name }
    }
    "click-deadletter-depth" = {
      description = "Click facts reached the deadletter queue after maxReceiveCount failed replays; they need attention."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      statistic   = "Maximum"
      threshold   = 0
      dimensions  = { QueueName = var.click_deadletter_name }
    }
  }

  function_alarms = merge([
    for label, function_name in var.function_names : {
      "${label}-errors" = {
        description = "Lambda ${function_name} reported errors."
        namespace   = "AWS/Lambda"
        metric_name = "Errors"
        statistic   = "Sum"
        threshold   = 0
        dimensions  = { FunctionName = function_name }
      }
      "${label}-throttles" = {
        description = "Lambda ${function_name} was throttled."
        namespace   = "AWS/Lambda"
        metric_name = "Throttles"
        statistic   = "Sum"
        threshold   = 0
        dimensions  = { FunctionName = function_name }
      }
    }
  ]...)

  api_alarms = {
    "resolver-5xx" = {
      description = "The resolver API answered 5xx (Persist unavailable or a failing resolve function)."
      namespace   = "AWS/ApiGateway"
      metric_name = "5xx"
      statistic   = "Sum"
      threshold   = var.resolver_5xx_threshold
      dimensions  = { ApiId = var.resolver_api_id }
    }
  }

  fact_alarms = {
    "facts-dead-lettered" = {
      description = "The resolver could not publish click facts to EventBridge and sent them to the click DLQ."
      namespace   = var.metrics_namespace
      metric_name = "FactsDeadLettered"
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { Environment = var.environment }
    }
    "facts-buffered" = {
      description = "The resolver could neither publish click facts nor send them to the click DLQ (a full disk, locally) and holds them in memory until one works again; /healthz reports click-recording degraded."
      namespace   = var.metrics_namespace
      metric_name = "FactsBuffered"
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { Environment = var.environment }
    }
    "facts-dropped" = {
      description = "Click facts were LOST: past the memory buffer and the log limit, neither kept nor logged."
      namespace   = var.metrics_namespace
      metric_name = "FactsDropped"
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { Environment = var.environment }
    }
    "facts-lost-to-log" = {
      description = "The resolver could neither publish click facts nor send them to the click DLQ; the facts exist only in its ERROR logs."
      namespace   = var.metrics_namespace
      metric_name = "FactsLostToLog"
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { Environment = var.environment }
    }
  }

  alarms = merge(local.queue_alarms, local.function_alarms, local.api_alarms, local.fact_alarms)
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.alarms

  alarm_name          = "${var.name_prefix}-${each.key}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric_name
  dimensions          = each.value.dimensions
  statistic           = each.value.statistic
  period              = local.period_seconds
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions
}
