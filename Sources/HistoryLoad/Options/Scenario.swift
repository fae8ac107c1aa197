import ArgumentParser

/// What the virtual users of `run` do.
enum Scenario: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// MessageWindow users: open the newest page, scroll back, come back to the bottom, repeat.
    case scrollback
    /// Random `before` pages at any depth of the largest conversation.
    case deep
    /// Long-polls on `events` while writers post; reports post-to-delivery latency.
    case tail
    /// Appends with `client_id`; every acked post is read back at the end.
    case post
    /// `around` a random message, then around a message known to exist.
    case jump
    /// The newest page of the largest conversation (docs/performance.md, "newest page").
    case newest
    /// The newest page of a random short conversation.
    case short
    /// Users with many conversations walk their inbox, open one at its first
    /// unread message, read to the bottom and move the read marker, while
    /// writers post (seed with `--add-members` first).
    case inbox
    /// Users reopen random conversations whose newest page they hold, with
    /// its `ETag` (`If-None-Match`): the 304 share, pages/s and p99 of
    /// revalidation; with `--writers`, posters change some meanwhile.
    case revalidate
    /// Deep readers all along, `--writers` typers (default 1,000) in every
    /// other segment: the page rate with and without typing (`TypingComparison`).
    case typing
    /// Users split over the scenarios by `--mix` weights.
    case mix
    /// `--path` of any HTTP server, status checked only (the tool's ceiling; compare with wrk).
    case get
    /// `--clients` event streams held open while writers post: post-to-delivery
    /// latency and the server's memory per idle stream (`StreamsRun`).
    case streams
    /// Backends following `GET /v1/events` while `--writers` (default 64)
    /// post as fast as they are answered: delivery, the backlog at the end,
    /// every acked post in the feed exactly once (`ServerFeedRun`).
    case feed

    /// The scenarios a `--mix` may name.
    static var mixable: [Scenario] { allCases.filter { $0 != .mix && $0 != .get && $0 != .typing && $0 != .streams && $0 != .feed } }
}

/// `--mix scrollback=5,deep=3,post=1`: how `mix` splits its users.
struct MixWeights: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    var weights: [(scenario: Scenario, weight: Int)]

    static let standard = MixWeights(weights: [(.scrollback, 5), (.deep, 2), (.jump, 1), (.post, 1), (.tail, 1)])

    init(weights: [(scenario: Scenario, weight: Int)]) { self.weights = weights }

    init?(argument: String) {
        var weights: [(scenario: Scenario, weight: Int)] = []
        for part in argument.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let name = pieces.first, let scenario = Scenario(rawValue: String(name)), Scenario.mixable.contains(scenario),
                  !weights.contains(where: { $0.scenario == scenario }) else { return nil }
            let weight = pieces.count == 2 ? Int(pieces[1]) : 1
            guard let weight, weight >= 0 else { return nil }
            if weight > 0 { weights.append((scenario, weight)) }
        }
        guard !weights.isEmpty else { return nil }
        self.weights = weights
    }

    /// The scenario of each of `clients` users: proportional to the weights
    /// (largest remainder), every weighted scenario getting at least one user
    /// when there are enough users, interleaved so a short run sees them all.
    func assign(clients: Int) -> [Scenario] {
        let total = weights.reduce(0) { $0 + $1.weight }
        var counts = weights.map { clients * $0.weight / total }
        var remainders = weights.enumerated().map { ($0.offset, clients * $0.element.weight % total) }
        remainders.sort { $0.1 > $1.1 }
        var left = clients - counts.reduce(0, +)
        for (index, _) in remainders where left > 0 {
            counts[index] += 1
            left -= 1
        }
        if clients >= weights.count {
            for index in counts.indices where counts[index] == 0 {
                if let donor = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[donor] > 1 {
                    counts[donor] -= 1
                    counts[index] += 1
                }
            }
        }
        var result: [Scenario] = []
        var remaining = counts
        while result.count < clients {
            for index in remaining.indices where remaining[index] > 0 {
                result.append(weights[index].scenario)
                remaining[index] -= 1
            }
        }
        return result
    }

    var description: String { weights.map { "\($0.scenario.rawValue)=\($0.weight)" }.joined(separator: ",") }

    static func == (lhs: MixWeights, rhs: MixWeights) -> Bool { lhs.description == rhs.description }
    func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
