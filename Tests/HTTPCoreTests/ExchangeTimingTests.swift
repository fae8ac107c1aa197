import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

/// The duration the observer reports (the access log's microseconds, the
/// metrics' latency histogram) must cover the handler's own work: a route
/// answering synchronously in the same read batch once reported 0 µs,
/// because the batch's start time was reused as the write time.
@Suite("Exchange timing")
struct ExchangeTimingTests {
    @Test func aSynchronousAnswerReportsTheTimeItsHandlerTook() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            for milliseconds in [3, 8] {
                let response = try client.request(get("/busy?ms=\(milliseconds)"))
                #expect(response.status == 200)
            }
            #expect(running.eventually { running.observer.exchanges.withLock { $0.count } == 2 })
            let reported = running.observer.exchanges.withLock { $0.map(\.microseconds) }
            // Lower bounds only: the handler slept that long before answering.
            #expect(reported.count == 2 && reported[0] >= 3_000 && reported[1] >= 8_000, "\(reported)")
        }
    }
}
