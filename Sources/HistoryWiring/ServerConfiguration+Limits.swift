import HistoryAccess

extension ServerConfiguration {
    /// The limits these settings ask for. A rate not configured is off in
    /// open mode (a loopback tool or a trusted network, where the peer
    /// address is all a limit could key on) and on at `RateLimit.defaultReads`
    /// and `.defaultWrites` in tokens mode, where clients are people.
    public func clientLimits(tokensMode: Bool) -> ClientLimits {
        func rate(_ configured: Int?, default fallback: RateLimit) -> RateLimit? {
            guard let configured else {
                guard tokensMode else { return nil }
                return rateLimitBurst.map { RateLimit(perSecond: fallback.perSecond, burst: $0) } ?? fallback
            }
            return configured > 0 ? RateLimit(perSecond: configured, burst: rateLimitBurst) : nil
        }
        return ClientLimits(maximumResponseBytes: maximumResponseBytes,
                            reads: rate(rateLimitReads, default: .defaultReads),
                            writes: rate(rateLimitWrites, default: .defaultWrites),
                            maximumParkedPollsPerClient: maximumParkedPollsPerClient)
    }
}
