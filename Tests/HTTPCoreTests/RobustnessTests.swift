import Dispatch
import Foundation
import Glibc
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

@Suite("Loopback: timeouts, stalled and vanishing clients, connection limits")
struct RobustnessTests {
    /// A connection that has sent nothing when the head timeout runs out is
    /// closed quietly (it asked nothing, so nothing is answered). When this
    /// test pauses for the 300 ms between connecting and sending, or the
    /// server gets to its timer before the bytes, the partial head meets
    /// such a close: that attempt shows nothing and another is made. A
    /// server that never answers an incomplete head 408 fails every one.
    @Test func anIncompleteHeadGets408() throws {
        try withLoopbackServer(limits: HTTPLimits(headTimeout: .milliseconds(300))) { running in
            var answered = false
            for _ in 0..<5 where !answered {
                let client = try running.client()
                defer { client.close() }
                let response: HTTPClientResponse
                do {
                    try client.sendRaw("GET / HTTP/1.1\r\nHost: x")
                    response = try client.receive()
                } catch HTTPClientError.connectionClosed {
                    continue
                } catch HTTPClientError.socket(let error) where error.errno == EPIPE || error.errno == ECONNRESET {
                    continue
                }
                answered = true
                #expect(response.status == 408)
                #expect(response.bodyText == "\(HTTPFailure.malformedRequest(.requestTimeout))")
                #expect(client.receiveIsClosed(within: .seconds(5)))
            }
            #expect(answered, "closed without an answer every time")
        }
    }

    @Test func aSlowBodyGets408() throws {
        try withLoopbackServer(limits: HTTPLimits(bodyTimeout: .milliseconds(300))) { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
            #expect(try client.receive().status == 408)
            #expect(running.responder.handled.withLock { $0 } == 0)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosedQuietly() throws {
        try withLoopbackServer(limits: HTTPLimits(idleTimeout: .milliseconds(300))) { running in
            let client = try running.client()
            defer { client.close() }
            #expect(try client.request(get("/a")).status == 200)
            #expect(client.receiveIsClosed(within: .seconds(5)))
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    @Test func aConnectionOverTheMaximumGets503() throws {
        try withLoopbackServer(maximumConnections: 2) { running in
            let first = try running.client(), second = try running.client()
            defer {
                first.close()
                second.close()
            }
            #expect(try first.request(get("/1")).status == 200)
            #expect(try second.request(get("/2")).status == 200)
            let third = try running.client()
            defer { third.close() }
            let refused = try third.receive()
            #expect(refused.status == 503)
            #expect(refused.bodyText == "tooManyConnections")
            #expect(third.receiveIsClosed(within: .seconds(5)))
            // Once one leaves, a newcomer is served.
            first.close()
            #expect(running.eventually { running.server.openConnectionCount == 1 })
            let fourth = try running.client()
            defer { fourth.close() }
            #expect(try fourth.request(get("/4")).status == 200)
        }
    }

    /// A client that sends its request at once, before the server has even
    /// accepted it, must still read the 503: closing a socket with unread
    /// input makes the kernel send a reset, which can destroy the answer
    /// before the client reads it.
    @Test func aRefusedClientThatAlreadySentItsRequestReadsThe503() throws {
        try withLoopbackServer(maximumConnections: 1) { running in
            let first = try running.client()
            defer { first.close() }
            #expect(try first.request(get("/1")).status == 200)
            for attempt in 0..<50 {
                let refused = try running.client()
                defer { refused.close() }
                try refused.sendRaw("GET /refused-\(attempt) HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = try refused.receive()
                #expect(answer.status == 503, "attempt \(attempt)")
                #expect(answer.bodyText == "tooManyConnections")
            }
        }
    }

    @Test func aStalledClientDoesNotDelayAnother() throws {
        try withLoopbackServer { running in
            let stalled = try running.stalledClients()
            defer { for client in stalled { client.close() } }
            let other = try running.client(timeout: .seconds(5))
            defer { other.close() }
            for index in 0..<50 {
                #expect(try other.request(get("/fast/\(index)")).status == 200)
            }
        }
    }

    @Test func aClientThatNeverReadsDoesNotMakeTheServerBufferWithoutBound() throws {
        try withLoopbackServer { running in
            let greedy = try running.client()
            defer { greedy.close() }
            var pipelined: [UInt8] = []
            for _ in 0..<200 { pipelined += Array("GET /big?n=1000000 HTTP/1.1\r\nHost: h\r\n\r\n".utf8) }
            try greedy.sendRaw(pipelined)  // 200 MB of answers asked for, none read
            Thread.sleep(forTimeInterval: 0.5)
            let handled = running.responder.handled.withLock { $0 }
            #expect(handled < 40, "handled \(handled) requests for a client that reads nothing")
            greedy.close()
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    /// A client that asks for 20 MB and reads none of it is reset at the
    /// write timeout, its own connection only: another is served meanwhile.
    @Test func aClientThatStopsReadingIsResetAtTheWriteTimeout() throws {
        try withLoopbackServer(limits: HTTPLimits(writeTimeout: .milliseconds(500))) { running in
            let greedy = try running.client()
            defer { greedy.close() }
            try greedy.send(get("/big?n=20000000"))
            let other = try running.client()
            defer { other.close() }
            #expect(try other.request(get("/meanwhile")).status == 200)
            #expect(running.eventually { running.server.openConnectionCount == 1 })
            #expect(try other.request(get("/after")).status == 200)
        }
    }

    /// A client that reads a 20 MB answer at about 2.5 MB/s keeps the
    /// server writing (the kernel's buffers empty and refill many times a
    /// second), yet cannot read it whole within the write timeout of one
    /// second: it is reset then, however steadily it read. Progress on an
    /// answer does not extend its time.
    @Test func steadyPartialReadsDoNotExtendTheWriteTimeout() throws {
        try withLoopbackServer(limits: HTTPLimits(writeTimeout: .seconds(1))) { running in
            let reader = try TrickleClient(port: running.port, receiveBufferBytes: nil)
            defer { reader.close() }
            // Taken before sending: the answer's clock cannot start earlier,
            // however long this thread waits between the two lines.
            let started = ContinuousClock.now
            try reader.send(Array("GET /big?n=20000000 HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
            var ended = false
            while !ended && ContinuousClock.now - started < .seconds(15) {
                Thread.sleep(forTimeInterval: 0.1)
                ended = try reader.hasEnded()
                if !ended { reader.read(upTo: 256 * 1024) }
            }
            let elapsed = ContinuousClock.now - started
            #expect(ended, "still open after \(elapsed), \(reader.bytesRead) bytes read")
            #expect(elapsed >= .milliseconds(900), "reset after \(elapsed), before the write timeout")
            #expect(reader.bytesRead < 20_000_000, "read \(reader.bytesRead) bytes")
        }
    }

    @Test func aClientVanishingMidResponseDoesNotHurtTheServer() throws {
        try withLoopbackServer { running in
            for _ in 0..<20 {
                let client = try running.client()
                try client.send(get("/big?n=5000000"))
                client.close()
            }
            #expect(running.eventually { running.server.openConnectionCount == 0 })
            let after = try running.client()
            defer { after.close() }
            #expect(try after.request(get("/still/alive")).status == 200)
        }
    }

    @Test func onCloseRunsWhenTheClientGoesAway() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            try client.send(get("/hold"))
            #expect(running.eventually { running.responder.handled.withLock { $0 } == 1 })
            client.close()
            #expect(running.eventually { running.responder.closeHandlersRun.withLock { $0 } == 1 })
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    @Test func manyOpenedAndAbortedConnectionsAllCloseAgain() throws {
        let limits = HTTPLimits(headTimeout: .milliseconds(300), bodyTimeout: .milliseconds(300))
        try withLoopbackServer(limits: limits) { running in
            let raw = [
                "", "GET", "GET / HTTP/1.1\r\nHost: h\r\n", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", "BAD\r\n\r\n",
                "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nabc", "GET /slow?ms=50 HTTP/1.1\r\nHost: h\r\n\r\n",
                "GET /big?n=3000000 HTTP/1.1\r\nHost: h\r\n\r\n",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            ]
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for index in 0..<50 {
                    guard let client = try? running.client(timeout: .seconds(2)) else { continue }
                    try? client.sendRaw(raw[(index + worker) % raw.count])
                    if index % 3 == 0 { _ = try? client.receive() }
                    client.close()
                }
            }
            #expect(running.eventually { running.server.openConnectionCount == 0 })
            #expect(running.eventually { running.observer.counts.withLock { $0.last } == 0 })
            let after = try running.client()
            defer { after.close() }
            #expect(try after.request(get("/ok")).status == 200)
        }
    }
}

@Suite("Loopback: shutdown")
struct ShutdownTests {
    @Test func shutdownDrainsInFlightRequestsAndClosesIdleOnes() throws {
        let responder = TestResponder()
        let server = HTTPServer(configuration: .init(port: 0), responder: responder)
        try server.start()
        let idle = try HTTPClientConnection(port: server.port)
        defer { idle.close() }
        #expect(try idle.request(get("/idle")).status == 200)
        let busy = try HTTPClientConnection(port: server.port)
        defer { busy.close() }
        try busy.send(get("/slow?ms=400"))
        let deadline = ContinuousClock.now + .seconds(5)
        while responder.handled.withLock({ $0 }) < 2 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        // A grace period far above the bounds waited below: an idle
        // connection closed, and a shutdown done, within them were not
        // merely cut off at its end (however slow the machine).
        let done = DispatchSemaphore(value: 0)
        server.shutdown(gracePeriod: .seconds(60)) { done.signal() }
        #expect(idle.receiveIsClosed(within: .seconds(20)))
        let answer = try busy.receive()
        #expect(answer.status == 200)
        #expect(answer.bodyText == "slow 400")
        #expect(answer.headers["Connection"] == "close")
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(server.openConnectionCount == 0)
        #expect(throws: (any Error).self) { try HTTPClientConnection(port: server.port, timeout: .seconds(1)) }
    }

    @Test func afterTheGracePeriodEverythingClosesAndOnCloseRuns() throws {
        let responder = TestResponder()
        let server = HTTPServer(configuration: .init(port: 0), responder: responder)
        try server.start()
        let held = try HTTPClientConnection(port: server.port)
        defer { held.close() }
        try held.send(get("/hold"))
        let deadline = ContinuousClock.now + .seconds(5)
        while responder.handled.withLock({ $0 }) < 1 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(shutdownAndWait(server, grace: .milliseconds(200)))
        #expect(responder.closeHandlersRun.withLock { $0 } == 1)
        #expect(held.receiveIsClosed(within: .seconds(2)))
        #expect(server.openConnectionCount == 0)
    }

    @Test func startTwiceOrAfterShutdownThrows() throws {
        let server = HTTPServer(configuration: .init(port: 0), responder: TestResponder())
        try server.start()
        #expect(throws: SocketError.self) { try server.start() }
        #expect(shutdownAndWait(server, grace: .zero))
        #expect(throws: SocketError.self) { try server.start() }
    }

    @Test func aBusyPortIsATypedError() throws {
        try withLoopbackServer { running in
            let second = HTTPServer(configuration: .init(port: running.port), responder: TestResponder())
            #expect(throws: SocketError(errno: EADDRINUSE, function: "bind")) { try second.start() }
            shutdownAndWait(second, grace: .zero)
        }
    }

    @Test func shutdownOfAnUnstartedServerCompletes() {
        let server = HTTPServer(configuration: .init(port: 0), responder: TestResponder())
        #expect(shutdownAndWait(server, grace: .seconds(1)))
        #expect(shutdownAndWait(server, grace: .seconds(1)))  // twice is fine
    }
}
