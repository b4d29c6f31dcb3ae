# CloudWatch alarms of one environment, each one something a person can act on (its
# meaning and first action: terraform/README.md, "Alarms"): the click DLQ pair, every
# function's errors, throttles and p99 duration, the resolve function's concurrency
# near its reservation, the APIs' 5xx and the resolver's 4xx rate (a stage throttle
# answers 429), replay failures, the deny list unreadable or missing, and the click
# facts that missed the bus, which the functions report as CloudWatch EMF metrics.
# Missing data is OK (EMF metrics exist only once something happened). An alarm fires
# when datapoints_to_alarm of its evaluation_periods breach, so a single noisy minute
# does not page anyone; losing a click and a message in the deadletter queue alarm on
# the first datapoint.

locals {
  actions = var.alarm_sns_topic_arn == "" ? [] : [var.alarm_sns_topic_arn]

  # Evaluation shapes: sustained (3 of 5 one-minute periods), prompt (2 of 3), or at once.
  sustained = { period = 60, evaluation_periods = 5, datapoints_to_alarm = 3 }
  at_once   = { period = 300, evaluation_periods = 1, datapoints_to_alarm = 1 }
  # Faster than sustained but still not one minute: 2 of 3 one-minute periods.
  prompt = { period = 60, evaluation_periods = 3, datapoints_to_alarm = 2 }

  queue_alarms = {
    "click-dlq-depth" = merge(local.sustained, {
      description = "Click facts are piling up in the click DLQ: EventBridge publishing is failing or replay is not draining the queue."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      statistic   = "Maximum"
      threshold   = var.click_dlq_depth_threshold
      dimensions  = { QueueName = var.click_dlq_name }
    })
    "click-dlq-age" = merge(local.sustained, {
      description = "The oldest click fact in the click DLQ has waited too long for replay."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateAgeOfOldestMessage"
      statistic   = "Maximum"
      threshold   = var.click_dlq_age_threshold_seconds
      dimensions  = { QueueName = var.click_dlq_name }
    })
    "click-deadletter-depth" = merge(local.at_once, {
      description = "Click facts reached the deadletter queue: they outlived the click DLQ's retention without a successful replay. Move them back with linoone dlq redrive once the bus works."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      statistic   = "Maximum"
      threshold   = 0
      dimensions  = { QueueName = var.click_deadletter_name }
    })
  }

  function_alarms = merge([
    for label, function_name in var.function_names : {
      "${label}-errors" = merge(local.sustained, {
        description = "Lambda ${function_name} reported errors (crashes, timeouts)."
        namespace   = "AWS/Lambda"
        metric_name = "Errors"
        statistic   = "Sum"
        threshold   = 0
        dimensions  = { FunctionName = function_name }
      })
      "${label}-throttles" = merge(local.sustained, {
        description = "Lambda ${function_name} was throttled: its reserved concurrency or the account's pool is exhausted."
        namespace   = "AWS/Lambda"
        metric_name = "Throttles"
        statistic   = "Sum"
        threshold   = 0
        dimensions  = { FunctionName = function_name }
      })
    }
  ]...)

  duration_alarms = {
    for label, threshold in var.duration_p99_threshold_ms : "${label}-duration-p99" => merge(local.sustained, {
      description = "The p99 duration of Lambda ${var.function_names[label]} is above ${threshold} ms: a dependency (Persist, the bus, the click DLQ) is slow."
      namespace   = "AWS/Lambda"
      metric_name = "Duration"
      statistic   = "p99"
      threshold   = threshold
      dimensions  = { FunctionName = var.function_names[label] }
    })
  }

  # Only where concurrency is reserved: near the reservation, the next visitors are
  # throttled.
  concurrency_alarms = {
    for label, reserved in var.reserved_concurrency : "${label}-concurrency" => merge(local.sustained, {
      description = "Lambda ${var.function_names[label]} runs near its reserved concurrency (${reserved}): more traffic, or slower invocations, will be throttled."
      namespace   = "AWS/Lambda"
      metric_name = "ConcurrentExecutions"
      statistic   = "Maximum"
      threshold   = floor(reserved * var.concurrency_alarm_ratio)
      dimensions  = { FunctionName = var.function_names[label] }
    }) if reserved > 0
  }

  api_alarms = {
    "resolver-5xx" = merge(local.sustained, {
      description = "The resolver API answered 5xx (Persist unavailable or a failing resolve function)."
      namespace   = "AWS/ApiGateway"
      metric_name = "5xx"
      statistic   = "Sum"
      threshold   = var.resolver_5xx_threshold
      dimensions  = { ApiId = var.resolver_api_id }
    })
    "management-5xx" = merge(local.sustained, {
      description = "The management API answered 5xx: issuance or inspection is failing (Persist unavailable or a failing issue function)."
      namespace   = "AWS/ApiGateway"
      metric_name = "5xx"
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { ApiId = var.management_api_id }
    })
  }

  # The functions' EMF counters, read by Environment on var.metrics_namespace: any
  # count is a click fact that missed the bus, a deny list not in force or a failed
  # replay, so each alarms above 0, in its own evaluation shape.
  emf_counter_alarms = {
    "facts-dead-lettered" = {
      metric_name = "FactsDeadLettered"
      shape       = local.sustained
      description = "The resolver could not publish click facts to EventBridge and sent them to the click DLQ."
    }
    "facts-buffered" = {
      metric_name = "FactsBuffered"
      shape       = local.at_once
      description = "The resolver could neither publish click facts nor send them to the click DLQ (a full disk, locally) and holds them in memory until one works again; /healthz reports click-recording degraded."
    }
    "facts-dropped" = {
      metric_name = "FactsDropped"
      shape       = local.at_once
      description = "Click facts were LOST: past the memory buffer and the log limit, neither kept nor logged."
    }
    "facts-lost-to-log" = {
      metric_name = "FactsLostToLog"
      shape       = local.at_once
      description = "The resolver could neither publish click facts nor send them to the click DLQ; the facts exist only in its ERROR logs."
    }
    "denylist-unreadable" = {
      metric_name = "DenyListUnreadable"
      shape       = local.sustained
      description = "The issue or resolve function could not read the deny list from SSM; the previous list stays in force, so new takedowns are not applied."
    }
    # Requests served with no deny list at all (none was ever loaded): takedowns and
    # issuance refusals are off, not merely late, so it pages sooner than a stale list.
    "denylist-missing" = {
      metric_name = "DenyListMissing"
      shape       = local.prompt
      description = "The issue or resolve function served requests with no deny list loaded: blocked targets are issued and taken-down links redirect."
    }
    "replay-failures" = {
      metric_name = "FactsReplayFailed"
      shape       = local.sustained
      description = "The replay function could not republish click facts from the click DLQ (the bus still fails); they stay in the queue and are retried."
    }
  }

  fact_alarms = {
    for label, a in local.emf_counter_alarms : label => merge(a.shape, {
      description = a.description
      namespace   = var.metrics_namespace
      metric_name = a.metric_name
      statistic   = "Sum"
      threshold   = 0
      dimensions  = { Environment = var.environment }
    })
  }

  alarms = merge(local.queue_alarms, local.function_alarms, local.duration_alarms, local.concurrency_alarms, local.api_alarms, local.fact_alarms)
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.alarms

  alarm_name          = "${var.name_prefix}-${each.key}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric_name
  dimensions          = each.value.dimensions
  statistic           = startswith(each.value.statistic, "p") ? null : each.value.statistic
  extended_statistic  = startswith(each.value.statistic, "p") ? each.value.statistic : null
  period              = each.value.period
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.datapoints_to_alarm
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions
}

# The resolver's 4xx share of its requests. API Gateway counts a stage throttle's 429
# as 4xx, so a client spending the stage's rate refuses visitors here; unknown tokens
# (404) and taken-down links (410) count too.
resource "aws_cloudwatch_metric_alarm" "resolver_4xx_rate" {
  alarm_name          = "${var.name_prefix}-resolver-4xx-rate"
  alarm_description   = "More than ${var.resolver_4xx_rate_threshold_percent} % of the resolver's answers are 4xx: 429 from the stage throttle (visitors refused), or a wave of unknown or blocked tokens."
  evaluation_periods  = local.sustained.evaluation_periods
  datapoints_to_alarm = local.sustained.datapoints_to_alarm
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.resolver_4xx_rate_threshold_percent
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  metric_query {
    id          = "rate"
    expression  = "IF(requests > ${var.resolver_4xx_min_requests}, 100 * errors / requests, 0)"
    label       = "4xx % of resolver requests"
    return_data = true
  }

  metric_query {
    id = "errors"

    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "4xx"
      dimensions  = { ApiId = var.resolver_api_id }
      stat        = "Sum"
      period      = local.sustained.period
    }
  }

  metric_query {
    id = "requests"

    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "Count"
      dimensions  = { ApiId = var.resolver_api_id }
      stat        = "Sum"
      period      = local.sustained.period
    }
  }
}
