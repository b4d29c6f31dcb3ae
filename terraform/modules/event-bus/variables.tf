variable "event_bus_name" {
  description = "Name or ARN of the shared engagement EventBridge bus. Give the ARN for a bus in another account. With create_bus it must be a name."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]{1,256}$", var.event_bus_name)) || can(regex("^arn:aws[a-z-]*:events:[a-z0-9-]+:[0-9]{12}:event-bus/[A-Za-z0-9._-]{1,256}$", var.event_bus_name))
    error_message = "event_bus_name must be an event bus name or an event bus ARN (arn:aws:events:<region>:<account>:event-bus/<name>)."
  }
}

variable "create_bus" {
  description = "Create the bus (sandbox only). False imports the existing shared bus: Linoone must not run a per-service bus where the shared bus is required."
  type        = bool
  default     = false
}
