import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

@Suite("Loopback: keep-alive, pipelining, versions")
struct LoopbackTests {
    @Test func keepAliveReusesOneConnection() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            for index in 0..<20 {
                let response = try client.request(get("/n/\(index)"))
                #expect(response.status == 200)
                #expect(response.bodyText == "GET /n/\(index)")
                #expect(response.headers["Connection"] == nil)
                #expect(response.headers["Date"]?.hasSuffix(" GMT") == true)
                #expect(response.headers["Content-Length"] == "\("GET /n/\(index)".utf8.count)")
            }
            #expect(running.server.openConnectionCount == 1)
        }
    }

    @Test func echoesBodies() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            let body = Array((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            let response = try client.request(HTTPRequest(method: .post, target: "/echo", body: body))
            #expect(response.status == 200)
            #expect(response.body == body)
            #expect(response.headers["X-Method"] == "POST")
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrderEvenWhenTheFirstIsSlow() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("GET /slow?ms=200 HTTP/1.1\r\nHost: h\r\n\r\nGET /n/2 HTTP/1.1\r\nHost: h\r\n\r\nPOST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nthree")
            #expect(try client.receive().bodyText == "slow 200")
            #expect(try client.receive().bodyText == "GET /n/2")
            #expect(try client.receive().bodyText == "three")
            // And the client's own pipelining: several sends, then receives.
            for index in 0..<10 { try client.send(get("/p/\(index)")) }
            for index in 0..<10 { #expect(try client.receive().bodyText == "GET /p/\(index)") }
        }
    }

    /// A client may pipeline its requests and then half-close (end its
    /// output) while the first is still being answered: every request it
    /// sent whole is still answered, in order, the last with
    /// `Connection: close`; a request cut short by the end gets a 400.
    @Test func aPeerThatHalfClosesAfterPipeliningGetsEveryAnswer() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("GET /slow?ms=150 HTTP/1.1\r\nHost: h\r\n\r\nGET /n/2 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nthree")
            client.finishSending()
            let first = try client.receive()
            #expect(first.bodyText == "slow 150" && first.headers["Connection"] == nil)
            #expect(try client.receive().bodyText == "GET /n/2")
            let last = try client.receive()
            #expect(last.bodyText == "three" && last.headers["Connection"] == "close")
            #expect(client.receiveIsClosed(within: .seconds(10)))

            let truncated = try running.client()
            defer { truncated.close() }
            try truncated.sendRaw("GET /slow?ms=100 HTTP/1.1\r\nHost: h\r\n\r\nGET /n/cut HTTP/1.1\r\nHost: h\r\nX-Half: ")
            truncated.finishSending()
            #expect(try truncated.receive().bodyText == "slow 100")
            #expect(try truncated.receive().status == 400)
            #expect(truncated.receiveIsClosed(within: .seconds(10)))
        }
    }

    /// The same past the output budget: the parser stopped taking
    /// requests when the end of input came, and takes them up again.
    @Test func aPeerThatHalfClosesBehindTheHighWaterMarkGetsEveryAnswer() throws {
        try withLoopbackServer { running in
            let client = try running.client(timeout: .seconds(10))
            defer { client.close() }
            var pipelined: [UInt8] = []
            for _ in 0..<12 { pipelined += Array("GET /big?n=100000 HTTP/1.1\r\nHost: h\r\n\r\n".utf8) }
            pipelined += Array("GET /last HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
            try client.sendRaw(pipelined)
            client.finishSending()
            for _ in 0..<12 { #expect(try client.receive().body.count == 100_000) }
            #expect(try client.receive().bodyText == "GET /last")
            #expect(client.receiveIsClosed(within: .seconds(10)))
        }
    }

    /// Answers past the output budget (256 KiB) that the socket
    /// takes at once must not strand the requests still buffered: nothing
    /// more arrives on the socket to wake the connection for them.
    @Test(arguments: [("/n/x", 10_000), ("/big?n=100000", 12)])
    func pipelinedRequestsPastTheOutputHighWaterMarkAreAllAnswered(target: String, count: Int) throws {
        try withLoopbackServer { running in
            let client = try running.client(timeout: .seconds(10))
            defer { client.close() }
            var pipelined: [UInt8] = []
            for _ in 0..<count { pipelined += Array("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n".utf8) }
            pipelined += Array("GET /last HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".utf8)
            try client.sendRaw(pipelined)
            for index in 0..<count {
                let response = try client.receive()
                guard response.status == 200 else {
                    Issue.record("answer \(index): status \(response.status)")
                    return
                }
            }
            #expect(try client.receive().bodyText == "GET /last")
            #expect(client.receiveIsClosed(within: .seconds(5)))
        }
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() throws {
        try withLoopbackServer { running in
            let plain = try running.client()
            defer { plain.close() }
            try plain.sendRaw("GET /a HTTP/1.0\r\n\r\n")
            let first = try plain.receive()
            #expect(first.status == 200)
            #expect(first.headers["Connection"] == "close")
            #expect(plain.receiveIsClosed(within: .seconds(5)))

            let kept = try running.client()
            defer { kept.close() }
            for _ in 0..<2 {
                try kept.sendRaw("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let response = try kept.receive()
                #expect(response.status == 200)
                #expect(response.headers["Connection"] == "keep-alive")
            }
        }
    }

    @Test func connectionCloseIsHonoured() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            let response = try client.request(get("/c", headers: ["Connection": "close"]))
            #expect(response.status == 200)
            #expect(response.headers["Connection"] == "close")
            #expect(client.receiveIsClosed(within: .seconds(5)))
            client.close()  // else the server lingers, draining, until its linger deadline
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    @Test func headHasTheLengthOfGetButNoBody() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            let head = try client.request(HTTPRequest(method: .head, target: "/big?n=1234"))
            #expect(head.status == 200)
            #expect(head.headers["Content-Length"] == "1234")
            #expect(head.body.isEmpty)
            // Had a body been sent, this answer would be read from its bytes.
            let next = try client.request(get("/after"))
            #expect(next.bodyText == "GET /after")
        }
    }

    @Test func continueIsSentBeforeTheBody() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try client.receive()
            #expect(interim.status == 100)
            try client.sendRaw("hello")
            let final = try client.receive()
            #expect(final.status == 200)
            #expect(final.bodyText == "hello")
            // A body sent along with the head needs no 100.
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi")
            #expect(try client.receive().status == 200)
        }
    }

    @Test func aHeadThatFailsGetsItsErrorInsteadOfContinue() throws {
        try withLoopbackServer(limits: HTTPLimits(maximumBodyBytes: 100)) { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n")
            let response = try client.receive()
            #expect(response.status == 413)
            #expect(response.bodyText == "\(HTTPFailure.malformedRequest(.bodyTooLarge))")
        }
    }

    @Test func chunkedRequestBodiesAreDecoded() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            try client.sendRaw("6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")
            let response = try client.receive()
            #expect(response.status == 200)
            #expect(response.bodyText == "hello world")
            #expect(try client.request(get("/next")).bodyText == "GET /next")
        }
    }

    @Test func servesIPv6Loopback() throws {
        // Skipped where the machine has no IPv6 loopback.
        let probe = HTTPServer(configuration: .init(host: "::1", port: 0), responder: TestResponder())
        let hasIPv6 = (try? probe.start()) != nil
        shutdownAndWait(probe, grace: .zero)
        guard hasIPv6 else { return }
        try withLoopbackServer(host: "::1") { running in
            let client = try HTTPClientConnection(host: "::1", port: running.port)
            defer { client.close() }
            #expect(try client.request(get("/six")).bodyText == "GET /six")
        }
    }

    @Test func theObserverSeesEveryExchangeAndConnectionCount() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            #expect(try client.request(get("/one")).status == 200)
            try client.sendRaw("BAD\r\n\r\n")
            #expect(try client.receive().status == 400)
            client.close()
            #expect(running.eventually { running.observer.exchanges.withLock { $0.count } == 2 })
            let exchanges = running.observer.exchanges.withLock { $0 }
            #expect(exchanges.map(\.status) == [200, 400])
            #expect(exchanges.map(\.route) == ["default", nil])
            #expect(exchanges[0].method == "GET" && exchanges[0].target == "/one" && exchanges[0].bytes == 8)
            #expect(running.eventually { running.observer.counts.withLock { $0.last } == 0 })
            #expect(running.observer.counts.withLock { $0.first } == 1)
        }
    }

    /// A request refused before its head was complete still names its
    /// method and target when its request line came whole (an operator
    /// reading the log wants to know which upload was too large), and names
    /// nothing when it did not.
    @Test func refusedRequestsNameTheirRequestLineWhenItArrived() throws {
        try withLoopbackServer { running in
            let tooLong = try running.client()
            try tooLong.sendRaw("POST /v1/big HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n")
            #expect(try tooLong.receive().status == 413)
            tooLong.close()
            let hugeHead = try running.client()
            try hugeHead.sendRaw("GET /v1/wide?x=1 HTTP/1.1\r\nHost: h\r\nX-Pad: " + String(repeating: "a", count: 20_000))
            #expect(try hugeHead.receive().status == 431)
            hugeHead.close()
            let hugeLine = try running.client()
            try hugeLine.sendRaw("GET /" + String(repeating: "b", count: 20_000))
            #expect(try hugeLine.receive().status == 431)
            hugeLine.close()
            #expect(running.eventually { running.observer.exchanges.withLock { $0.count } == 3 })
            let exchanges = running.observer.exchanges.withLock { $0 }
            #expect(exchanges.map(\.status) == [413, 431, 431])
            #expect(exchanges.map(\.method) == ["POST", "GET", ""])
            #expect(exchanges.map(\.target) == ["/v1/big", "/v1/wide?x=1", ""])
        }
    }
}
