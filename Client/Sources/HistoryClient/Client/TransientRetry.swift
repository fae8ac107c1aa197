/// Runs `body` until it succeeds or fails for good: a transient
/// ``HistoryClientError`` (no answer, a 429 or 503) is waited out, its
/// `Retry-After` when it has one, else `policy`'s backoff, which gives up
/// after ``ReconnectPolicy/maximumAttempts`` failures. What the live loops
/// (``ConversationFeed``, ``LiveInbox``) use for the page a feed waits for,
/// so a rate limit never ends a feed.
func withTransientRetry<T>(
    policy: ReconnectPolicy, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async throws -> T {
    var failures = 0
    while true {
        do {
            return try await body()
        } catch let error as HistoryClientError where error.isTransient {
            let delay: Duration
            if let retryAfter = error.retryAfter {
                delay = policy.delay(retryAfter: retryAfter, randomFraction: .random(in: 0..<1))
            } else {
                failures += 1
                if let maximum = policy.maximumAttempts, failures >= maximum { throw error }
                delay = policy.delay(afterFailures: failures, randomFraction: .random(in: 0..<1))
            }
            try await Task.sleep(for: delay)
        }
    }
}
