import HTTPCore
import HistoryTestSupport
import Testing
@testable import HistoryAPI

/// `Metrics` records each response in its thread's shard and adds the
/// shards up when rendered: counts recorded by many threads at once come
/// out exact, per route, method and status, and in the latency histogram.
/// The recorders are threads of their own (`onOwnThread`), never the test
/// runner's, so they cannot starve other tests.
@Suite("Metrics shards")
struct MetricsShardTests {
    @Test func countsRecordedByManyThreadsAtOnceAddUpExactly() async throws {
        let metrics = Metrics()
        let threads = 8
        let perThread = 5_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    try await onOwnThread {
                        for index in 0..<perThread {
                            let status = index.isMultiple(of: 10) ? 404 : 200
                            metrics.record(HTTPExchange(method: thread.isMultiple(of: 2) ? "GET" : "POST", target: "/x",
                                                        status: status, bytes: 10, microseconds: 150 + index % 100,
                                                        route: "/v1/conversations/{cid}/messages"))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let text = String(decoding: metrics.render(parkedLongPolls: 0), as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        let route = #"route="/v1/conversations/{cid}/messages""#
        // Half the threads GET, half POST; one request in ten is a 404.
        let each = threads / 2 * perThread
        #expect(lines.contains(#"history_http_requests_total{\#(route),method="GET",status="200"} \#(each * 9 / 10)"#))
        #expect(lines.contains(#"history_http_requests_total{\#(route),method="GET",status="404"} \#(each / 10)"#))
        #expect(lines.contains(#"history_http_requests_total{\#(route),method="POST",status="200"} \#(each * 9 / 10)"#))
        #expect(lines.contains(#"history_http_requests_total{\#(route),method="POST",status="404"} \#(each / 10)"#))
        #expect(lines.contains(#"history_http_request_duration_seconds_count{\#(route)} \#(threads * perThread)"#))
        // Every latency was 150 to 249 µs: all in the 0.00025 bucket and above.
        #expect(lines.contains(#"history_http_request_duration_seconds_bucket{\#(route),le="0.0001"} 0"#))
        #expect(lines.contains(#"history_http_request_duration_seconds_bucket{\#(route),le="0.00025"} \#(threads * perThread)"#))
    }
}
