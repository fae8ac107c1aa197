/// Collects what a consumer task receives, for tests that wait on it.
actor Collector<Element: Sendable> {
    private(set) var items: [Element] = []

    func append(_ item: Element) {
        items.append(item)
    }

    /// Polls until `count` items arrived or `limit` passed; returns what arrived.
    func waitFor(count: Int, limit: Duration = .seconds(30)) async -> [Element] {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while items.count < count, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return items
    }
}
