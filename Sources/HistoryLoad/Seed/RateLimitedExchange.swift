import Foundation
import HTTPCore

/// Pipelined requests that wait out a rate limit instead of failing.
///
/// A server started with `--rate-limit-writes` (open mode, or a seed
/// without an admin token) answers a fast seeder 429 `rate_limited` with
/// `Retry-After`. Those answers are not failures of the server: the
/// requests refused are sent again after the wait (a post keeps its
/// `client_id`, so a retry never stores a message twice), and only a
/// server that keeps refusing for `maximumWaits` rounds counts as failing.
enum RateLimitedExchange {
    /// Rounds of waiting for one batch before its 429s count as failures:
    /// at the server's longest `Retry-After` this is minutes, not forever.
    static let maximumWaits = 100
    /// The wait when `Retry-After` is missing or unreadable (seconds).
    static let defaultWait = 1.0

    /// Sends `requests` on `connection`, pipelined, and returns one answer
    /// per request in order: the first that was not a 429, or the last 429
    /// after `maximumWaits` rounds. `waited` counts the rounds slept.
    static func send(_ requests: [HTTPRequest], on connection: HTTPClientConnection,
                     waited: inout Int) throws -> [HTTPClientResponse] {
        var answers = [HTTPClientResponse?](repeating: nil, count: requests.count)
        var pending = Array(requests.indices)
        var rounds = 0
        while !pending.isEmpty {
            for index in pending { try connection.send(requests[index]) }
            var refused: [Int] = []
            var wait = 0.0
            for index in pending {
                let response = try connection.receive()
                answers[index] = response
                if response.status == 429 && rounds < maximumWaits {
                    refused.append(index)
                    wait = max(wait, retryAfter(response))
                }
            }
            guard !refused.isEmpty else { break }
            rounds += 1
            waited += 1
            Thread.sleep(forTimeInterval: wait)
            pending = refused
        }
        return answers.map { $0! }
    }

    /// One request, as `send` treats a batch.
    static func request(_ request: HTTPRequest, on connection: HTTPClientConnection,
                        waited: inout Int) throws -> HTTPClientResponse {
        try send([request], on: connection, waited: &waited)[0]
    }

    /// `Retry-After` in seconds (the server sends whole seconds, at least
    /// 1), bounded to a minute so a bad header cannot stall a seed.
    static func retryAfter(_ response: HTTPClientResponse) -> Double {
        guard let text = response.headers["Retry-After"], let seconds = Double(text), seconds >= 0 else {
            return defaultWait
        }
        return min(seconds, 60)
    }
}
