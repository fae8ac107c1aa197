import HTTPCore
import Synchronization

/// The end of a run that posted: every post the server acknowledged must be
/// readable, with the `client_id` it was sent with (docs/API.md guarantee 3, short
/// of the `kill -9`, which the server's own tests do).
enum ReadBack {
    struct Outcome {
        var acked = 0
        var verified = 0
        var missing = 0
    }

    /// Walks `after` pages over each conversation's acked id range.
    static func verify(_ acks: [AckedPost], catalog: ConversationCatalog, liveCount: Int, endpoint: ServerEndpoint,
                       stats: LoadStats, authorization: String? = nil) -> Outcome {
        var outcome = Outcome(acked: acks.count)
        guard !acks.isEmpty else { return outcome }
        let live = catalog.live(liveCount)
        let connection = LoadConnection(endpoint: endpoint, shard: stats.shard(for: 0), authorization: authorization)
        defer { connection.reset() }
        var page = PageSummary()
        let byConversation = Dictionary(grouping: acks, by: \.conversation)
        for (conversation, posts) in byConversation.sorted(by: { $0.key < $1.key }) {
            let entry = live[conversation]
            let wanted = Dictionary(posts.map { ($0.id, $0.clientID) }, uniquingKeysWith: { first, _ in first })
            guard let low = wanted.keys.min(), let high = wanted.keys.max() else { continue }
            var found: [Int64: String?] = [:]
            var cursor = low - 1
            // Bounded: each page moves the cursor up, and the range holds at most
            // every message posted during the run.
            var pages = 0
            while cursor < high, pages < 1_000_000 {
                pages += 1
                let target = entry.messagesPrefix + "after=\(cursor)&limit=200"
                guard let response = connection.perform(.get, target, kind: .readBack), response.status == 200,
                      (try? page.scan(response.body, wantClientIDs: true)) != nil, let last = page.ids.last, last > cursor
                else { break }
                for (id, clientID) in zip(page.ids, page.clientIDs) where wanted[id] != nil { found[id] = clientID }
                cursor = last
                if !page.hasNewer { break }
            }
            for (id, clientID) in wanted {
                if let seen = found[id], seen == clientID {
                    outcome.verified += 1
                } else {
                    outcome.missing += 1
                    let what = found[id] == nil ? "not found" : "found with client_id \((found[id] ?? nil) ?? "null")"
                    stats.invariants.violation(.ackedReadable, "\(entry.id): acked post \(id) (client_id \(clientID)) \(what)")
                }
            }
        }
        stats.shard(for: 0).state.withLock { $0.checks["acked posts read back", default: 0] += outcome.verified + outcome.missing }
        return outcome
    }
}
