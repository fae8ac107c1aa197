import HTTPCore

/// What a feed request says about streaming (docs/API.md, "Live"): whether
/// it asks for Server-Sent Events, and the cursor it resumes after.
enum StreamRequest {
    /// True when `Accept` names `text/event-stream` (not refused with `q=0`):
    /// what `EventSource` and every SSE client send. Without it a feed
    /// answers as a long-poll.
    static func wantsStream(_ request: HTTPRequest) -> Bool {
        for value in request.headers.values(of: "Accept") {
            for range in value.split(separator: ",") {
                let parameters = range.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
                guard parameters.first == "text/event-stream" else { continue }
                let refused = parameters.dropFirst().contains { parameter in
                    let compact = parameter.replacingSpaces
                    return compact.hasPrefix("q=") && Double(compact.dropFirst(2)) == 0
                }
                if !refused { return true }
            }
        }
        return false
    }

    /// `Last-Event-ID`: the `id` of the last event the client got, which a
    /// reconnecting `EventSource` sends by itself; it wins over `since`.
    /// Nil when absent; anything but a cursor (an integer from 0) is 400
    /// `invalid_version`, like a bad `since`.
    static func lastEventID(_ request: HTTPRequest) throws(APIError) -> Int64? {
        guard let text = request.headers["Last-Event-ID"] else { return nil }
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 19, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let cursor = Int64(trimmed) else {
            throw APIError(.invalidVersion,
                           "Last-Event-ID must be the id of an event this feed sent (an integer from 0), not '\(abbreviated(text))'")
        }
        return cursor
    }
}

private extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    var replacingSpaces: String { String(filter { $0 != " " && $0 != "\t" }) }
}
