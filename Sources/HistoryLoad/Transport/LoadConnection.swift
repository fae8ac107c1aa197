import HTTPCore
import Synchronization

/// One virtual user's keep-alive connection: sends a request, times it,
/// records it, and reconnects after a transport failure.
///
/// Not Sendable, like the `HTTPClientConnection` inside it: one thread owns it.
final class LoadConnection {
    let endpoint: ServerEndpoint
    let timeout: Duration
    let shard: StatsShard
    /// Set for open-loop runs: each request waits for its slot and is timed from it.
    var pacer: Pacer?
    /// Tokens mode: the `Authorization` value of every request.
    let authorization: String?
    /// Sends `Accept-Encoding: gzip` (and inflates gzip answers after
    /// recording their bytes as sent).
    let acceptsGzip: Bool

    private var connection: HTTPClientConnection?

    init(endpoint: ServerEndpoint, shard: StatsShard, timeout: Duration = .seconds(30), pacer: Pacer? = nil,
         authorization: String? = nil, acceptsGzip: Bool = false) {
        self.endpoint = endpoint
        self.shard = shard
        self.timeout = timeout
        self.pacer = pacer
        self.authorization = authorization
        self.acceptsGzip = acceptsGzip
    }

    deinit { connection?.close() }

    /// Sends one request and waits for its answer.
    ///
    /// Every answer is recorded under `kind`; a status outside `accepted` is
    /// also counted as an error by status and contract error code. A
    /// transport failure is counted, the connection reopened, and nil returned.
    /// - Parameter start: when the request was due, from ``nextSlot()``;
    ///   nil takes the next slot now (open loop) or the current time (closed loop).
    func perform(_ method: HTTPMethod, _ target: String, body: [UInt8] = [], kind: RequestKind,
                 accepted: ClosedRange<Int> = 200...299, start: UInt64? = nil, ifNoneMatch: String? = nil) -> HTTPClientResponse? {
        let start = start ?? nextSlot()
        do {
            let response = try exchange(method, target, body: body, ifNoneMatch: ifNoneMatch)
            Self.record(response, kind: kind, start: start, end: MonotonicClock.now(), accepted: accepted, shard: shard)
            if response.headers["Connection"]?.caseInsensitiveEquals("close") == true { reset() }
            return Self.decoded(response, kind: kind, shard: shard)
        } catch {
            reset()
            shard.state.withLock { $0.recordError("\(kind.name): transport \(Self.describe(error))") }
            // A refused or reset connection would otherwise spin this thread.
            MonotonicClock.sleep(nanoseconds: 10_000_000)
            return nil
        }
    }

    /// Records one answer under `kind`; a status outside `accepted` is also
    /// counted as an error by status and contract error code.
    static func record(_ response: HTTPClientResponse, kind: RequestKind, start: UInt64, end: UInt64,
                       accepted: ClosedRange<Int>, shard: StatsShard) {
        let ok = accepted.contains(response.status)
        shard.state.withLock { state in
            state.record(kind, nanoseconds: end &- start, bytes: response.body.count)
            if !ok {
                let code = BodyScan.errorCode(response.body) ?? "-"
                state.recordError("\(kind.name): \(response.status) \(code)")
            }
        }
    }

    /// The answer with a gzip body inflated (its bytes were recorded as
    /// sent); nil, counted as an error, when it does not inflate.
    static func decoded(_ response: HTTPClientResponse, kind: RequestKind, shard: StatsShard) -> HTTPClientResponse? {
        guard response.headers["Content-Encoding"] != nil else { return response }
        guard response.headers["Content-Encoding"]?.caseInsensitiveEquals("gzip") == true,
              let inflated = Gzip.decompress(response.body) else {
            shard.state.withLock { $0.recordError("\(kind.name): a Content-Encoding that does not decode") }
            return nil
        }
        var response = response
        response.body = inflated
        response.headers.remove(name: "Content-Encoding")
        return response
    }

    /// The headers every request of a load connection carries.
    static func headers(_ method: HTTPMethod, body: [UInt8], authorization: String?, acceptsGzip: Bool,
                        ifNoneMatch: String?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if !body.isEmpty || method == .post || method == .patch {
            headers.add(name: "Content-Type", value: "application/json")
        }
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        if acceptsGzip { headers.add(name: "Accept-Encoding", value: "gzip") }
        if let ifNoneMatch { headers.add(name: "If-None-Match", value: ifNoneMatch) }
        return headers
    }

    /// When the next request is due: after waiting for its slot when paced, else now.
    func nextSlot() -> UInt64 {
        pacer != nil ? pacer!.waitForNextSlot() : MonotonicClock.now()
    }

    /// Opens the connection now (idle connections, and users that must not
    /// pay the connect inside their first timed request).
    func connect() throws {
        if connection == nil {
            connection = try HTTPClientConnection(host: endpoint.host, port: endpoint.port, timeout: timeout)
        }
    }

    func reset() {
        connection?.close()
        connection = nil
    }

    private func exchange(_ method: HTTPMethod, _ target: String, body: [UInt8], ifNoneMatch: String?) throws -> HTTPClientResponse {
        try connect()
        let headers = Self.headers(method, body: body, authorization: authorization, acceptsGzip: acceptsGzip,
                                   ifNoneMatch: ifNoneMatch)
        return try connection!.request(HTTPRequest(method: method, target: target, headers: headers, body: body))
    }

    private static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.count > 60 ? String(text.prefix(60)) : text
    }
}
