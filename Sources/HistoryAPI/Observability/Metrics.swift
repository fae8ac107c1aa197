import Glibc
import HTTPCore
import Synchronization

/// The server's counters, rendered in the Prometheus text format 0.0.4
/// for `GET /metrics`.
///
/// Recording is on the hot path (every response): the per-route counts
/// live in 16 shards, each behind its own `Mutex`, and a worker thread
/// records into the shard its thread picks, one dictionary lookup by route
/// (a bounded set of labels: routes are patterns, never paths). With one
/// lock for every response, the worker threads queued on it (1.6% of the
/// server's CPU samples in `_lockSlow` on PostgreSQL, docs/performance.md,
/// "The Date line without a lock"). Rendering copies each shard under its
/// lock, adds them up and formats outside the locks.
///
/// Families:
/// - `history_http_requests_total{route,method,status}` counter
/// - `history_http_request_duration_seconds{route}` histogram
/// - `history_open_connections` gauge
/// - `history_parked_long_polls` gauge (the store's parked waits)
/// - `history_read_pool_queued` gauge (requests and long-poll re-reads
///   waiting for a read-pool thread: a pool that cannot keep up)
/// - `history_append_batch_size` histogram (appends per group commit)
/// - `history_page_statement_size` histogram (PostgreSQL: newest and
///   `before` pages read by one statement, `ReadBatcher`)
/// - `history_newest_page_cache_hits_total` and `..._stores_total`
///   counters: newest pages answered from `NewestPageCache`, and kept in it
/// - `history_access_denied_total{status,code}` counter: 401s and 403s by
///   error code (a fixed set of codes; never a user id or a path)
///
/// Related specification: <https://prometheus.io/docs/instrumenting/exposition_formats/>
public final class Metrics: Sendable {
    /// The `route` label of answers the HTTP layer made itself (bad bytes, 431, 408...).
    public static let httpLayerRoute = "http"

    static let latencyBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                           0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    static let batchBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    static let pageStatementBuckets: [Double] = [1, 2, 4, 8, 16]

    fileprivate struct StatusKey: Hashable, Sendable {
        var method: String
        var status: Int
    }

    fileprivate struct RouteStats: Sendable {
        var counts: [StatusKey: Int] = [:]
        var latency = Histogram(upperBounds: Metrics.latencyBuckets)
    }

    private struct State: Sendable {
        var batches = Histogram(upperBounds: Metrics.batchBuckets)
        var pageStatements = Histogram(upperBounds: Metrics.pageStatementBuckets)
        var openConnections = 0
        var denied: [DeniedKey: Int] = [:]
    }

    fileprivate struct DeniedKey: Hashable, Sendable {
        var status: Int
        var code: String
    }

    private final class RouteShard: Sendable {
        let routes = Mutex<[String: RouteStats]>([:])
    }

    private let state = Mutex(State())
    private static let shardCount = 16
    private let shards = (0..<Metrics.shardCount).map { _ in RouteShard() }

    public init() {}

    /// One answered request; called by the server's observer for every response.
    public func record(_ exchange: HTTPExchange) {
        let route = exchange.route ?? Self.httpLayerRoute
        let key = StatusKey(method: Self.methodLabel(exchange.method), status: exchange.status)
        let seconds = Double(exchange.microseconds) / 1_000_000
        shards[Self.threadShard()].routes.withLock { routes in
            routes[route, default: RouteStats()].record(key, seconds: seconds)
        }
    }

    /// The calling thread's shard: its id spread by a multiplicative hash
    /// (Fibonacci hashing), the top 4 bits.
    private static func threadShard() -> Int {
        let thread = UInt64(truncatingIfNeeded: UInt(bitPattern: Int(truncatingIfNeeded: pthread_self())))
        return Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 60)
    }

    /// Every shard's counts added up.
    private func routeTotals() -> [String: RouteStats] {
        var totals: [String: RouteStats] = [:]
        for shard in shards {
            let routes = shard.routes.withLock { $0 }
            totals.merge(routes) { total, more in total.adding(more) }
        }
        return totals
    }

    /// One group commit of `size` appends (`SQLiteStoreConfiguration.onBatchCommitted`).
    public func recordBatch(size: Int) {
        state.withLock { $0.batches.observe(Double(size)) }
    }

    /// One PostgreSQL statement that read `pages` pages together
    /// (`PostgresStoreConfiguration.onPageStatement`).
    public func recordPageStatement(pages: Int) {
        state.withLock { $0.pageStatements.observe(Double(pages)) }
    }

    /// One request refused by authentication (401) or the access policy
    /// (403); `code` is one of the contract's codes.
    public func recordDenied(status: Int, code: String) {
        state.withLock { $0.denied[DeniedKey(status: status, code: code), default: 0] += 1 }
    }

    public func setOpenConnections(_ count: Int) {
        state.withLock { $0.openConnections = count }
    }

    /// The text exposition; `parkedLongPolls` is read from the store at scrape time.
    public func render(parkedLongPolls: Int, readPoolQueued: Int = 0,
                       newestPageCache: (hits: Int, stored: Int) = (0, 0)) -> [UInt8] {
        let snapshot = state.withLock { $0 }
        let routes = routeTotals()
        var text = ""
        text.reserveCapacity(4096 + routes.count * 2048)

        text += "# HELP history_http_requests_total HTTP requests answered, by route, method and status.\n"
        text += "# TYPE history_http_requests_total counter\n"
        for route in routes.keys.sorted() {
            let stats = routes[route]!
            for (key, count) in stats.counts.sorted(by: { ($0.key.method, $0.key.status) < ($1.key.method, $1.key.status) }) {
                text += "history_http_requests_total{route=\"\(Self.escape(route))\",method=\"\(Self.escape(key.method))\",status=\"\(key.status)\"} \(count)\n"
            }
        }

        text += "# HELP history_http_request_duration_seconds From a request's first byte to its answer's last, by route.\n"
        text += "# TYPE history_http_request_duration_seconds histogram\n"
        for route in routes.keys.sorted() {
            routes[route]!.latency.render(name: "history_http_request_duration_seconds",
                                                   labels: "route=\"\(Self.escape(route))\"", into: &text)
        }

        text += "# HELP history_open_connections Client connections open now.\n"
        text += "# TYPE history_open_connections gauge\n"
        text += "history_open_connections \(snapshot.openConnections)\n"

        text += "# HELP history_parked_long_polls Events long-polls parked waiting for a change.\n"
        text += "# TYPE history_parked_long_polls gauge\n"
        text += "history_parked_long_polls \(parkedLongPolls)\n"

        text += "# HELP history_read_pool_queued Requests waiting for a read-pool thread.\n"
        text += "# TYPE history_read_pool_queued gauge\n"
        text += "history_read_pool_queued \(readPoolQueued)\n"

        text += "# HELP history_newest_page_cache_hits_total Newest pages answered from the kept bytes, without encoding (on SQLite without reading).\n"
        text += "# TYPE history_newest_page_cache_hits_total counter\n"
        text += "history_newest_page_cache_hits_total \(newestPageCache.hits)\n"
        text += "# HELP history_newest_page_cache_stores_total Newest pages kept after a read.\n"
        text += "# TYPE history_newest_page_cache_stores_total counter\n"
        text += "history_newest_page_cache_stores_total \(newestPageCache.stored)\n"

        text += "# HELP history_append_batch_size Appends committed per group-commit transaction.\n"
        text += "# TYPE history_append_batch_size histogram\n"
        snapshot.batches.render(name: "history_append_batch_size", labels: nil, into: &text)

        text += "# HELP history_page_statement_size Pages read by one statement (PostgreSQL: newest and before pages asked at the same time read together).\n"
        text += "# TYPE history_page_statement_size histogram\n"
        snapshot.pageStatements.render(name: "history_page_statement_size", labels: nil, into: &text)

        text += "# HELP history_access_denied_total Requests refused by authentication (401) or access policy (403), by code.\n"
        text += "# TYPE history_access_denied_total counter\n"
        for (key, count) in snapshot.denied.sorted(by: { ($0.key.status, $0.key.code) < ($1.key.status, $1.key.code) }) {
            text += "history_access_denied_total{status=\"\(key.status)\",code=\"\(Self.escape(key.code))\"} \(count)\n"
        }
        return Array(text.utf8)
    }

    /// Known methods by name, anything else as `OTHER`: a client must not be
    /// able to grow the label set by inventing methods.
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": method
        default: "OTHER"
        }
    }

    /// Label values escape backslash, quote and newline.
    static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A }) else {
            return value
        }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension Metrics {
    fileprivate struct Histogram: Sendable {
        let upperBounds: [Double]
        /// Per bucket, not cumulative; made cumulative when rendered.
        var counts: [Int]
        var sum: Double = 0
        var count: Int = 0

        init(upperBounds: [Double]) {
            self.upperBounds = upperBounds
            counts = Array(repeating: 0, count: upperBounds.count)
        }

        mutating func observe(_ value: Double) {
            sum += value
            count += 1
            if let index = upperBounds.firstIndex(where: { value <= $0 }) {
                counts[index] += 1
            }
        }

        func adding(_ other: Histogram) -> Histogram {
            var total = self
            total.counts = zip(counts, other.counts).map { $0 + $1 }
            total.sum += other.sum
            total.count += other.count
            return total
        }

        func render(name: String, labels: String?, into text: inout String) {
            let prefix = labels.map { "\($0)," } ?? ""
            var cumulative = 0
            for (bound, bucketCount) in zip(upperBounds, counts) {
                cumulative += bucketCount
                text += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
            let suffix = labels.map { "{\($0)}" } ?? ""
            text += "\(name)_sum\(suffix) \(sum)\n"
            text += "\(name)_count\(suffix) \(count)\n"
        }
    }
}

extension Metrics.RouteStats {
    fileprivate mutating func record(_ key: Metrics.StatusKey, seconds: Double) {
        counts[key, default: 0] += 1
        latency.observe(seconds)
    }

    fileprivate func adding(_ other: Metrics.RouteStats) -> Metrics.RouteStats {
        Metrics.RouteStats(counts: counts.merging(other.counts, uniquingKeysWith: +), latency: latency.adding(other.latency))
    }
}
