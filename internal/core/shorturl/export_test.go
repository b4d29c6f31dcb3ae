package shorturl

// QueuedIssues is how many ShortenFor calls wait for the coalescer's next batch.
func QueuedIssues(is *Issuer) int {
	is.together.mu.Lock()
	defer is.together.mu.Unlock()
	return len(is.together.wait)
}
