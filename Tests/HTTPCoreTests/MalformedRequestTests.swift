import Foundation
import HistoryTestSupport
import Synchronization
import Testing
@testable import HTTPCore

/// Raw bytes in, the contract's error out, then the connection closes.
@Suite("Loopback: malformed requests and limits")
struct MalformedRequestTests {
    private func expectError(_ raw: String, status: Int,
                             limits: HTTPLimits = HTTPLimits()) throws {
        try withLoopbackServer(limits: limits) { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw(raw)
            let response = try client.receive()
            #expect(response.status == status, "\(raw.debugDescription)")
            #expect(response.bodyText.hasPrefix("malformedRequest("), "\(response.bodyText)")
            #expect(response.headers["Connection"] == "close")
            #expect(client.receiveIsClosed(within: .seconds(5)))
        }
    }

    @Test func garbageRequestLine() throws {
        try expectError("HELLO THERE\r\n\r\n", status: 400)
    }

    @Test func binaryGarbage() throws {
        try expectError(String(decoding: [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x0d, 0x0a, 0x0d, 0x0a], as: UTF8.self),
                        status: 400)
    }

    /// The first bytes of a TLS ClientHello, with no line end: answered at
    /// once, not after the 10 s head timeout (the client waits 5 s at most).
    @Test func aTLSHandshakeIsRefusedAtOnce() throws {
        try expectError(String(decoding: [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03], as: UTF8.self),
                        status: 400)
    }

    @Test func duplicateHost() throws {
        try expectError("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400)
    }

    @Test func unsupportedVersion() throws {
        try expectError("GET / HTTP/2.0\r\n\r\n", status: 505)
    }

    @Test func badHeaderSyntax() throws {
        try expectError("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", status: 400)
    }

    @Test func unsupportedTransferEncoding() throws {
        try expectError("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501)
    }

    @Test func unsupportedExpectation() throws {
        try expectError("POST / HTTP/1.1\r\nHost: h\r\nExpect: tea\r\n\r\n", status: 417)
    }

    @Test func oversizeHeaders() throws {
        let filler = String(repeating: "x", count: 17 * 1024)
        try expectError("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(filler)\r\n\r\n", status: 431)
    }

    @Test func aHeadThatNeverEndsIsRefusedAtTheLimit() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("GET / HTTP/1.1\r\nHost: h\r\nX-Endless: ")
            let chunk = String(repeating: "y", count: 1024)
            var response: HTTPClientResponse? = nil
            for _ in 0..<64 {
                do {
                    try client.sendRaw(chunk)
                } catch {
                    break  // the server closed after answering
                }
            }
            response = try client.receive()
            #expect(response?.status == 431)
        }
    }

    @Test func oversizeBodyIsAnsweredBeforeTheBodyIsSent() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10000000\r\n\r\n")
            let response = try client.receive()
            #expect(response.status == 413)
            #expect(response.bodyText == "\(HTTPFailure.malformedRequest(.bodyTooLarge))")
            #expect(client.receiveIsClosed(within: .seconds(5)))
            #expect(running.responder.handled.withLock { $0 } == 0)
        }
    }

    @Test func oversizeChunkedBody() throws {
        let chunk = String(repeating: "z", count: 0x8000)
        try expectError("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8000\r\n\(chunk)\r\n8000\r\n\(chunk)\r\n1\r\n",
                        status: 413)
    }

    @Test func truncatedBodyThenHalfClose() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            defer { client.close() }
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
            client.finishSending()
            let response = try client.receive()
            #expect(response.status == 400)
            #expect(client.receiveIsClosed(within: .seconds(5)))
            #expect(running.responder.handled.withLock { $0 } == 0)
            #expect(running.eventually { running.server.openConnectionCount == 0 })
        }
    }

    @Test func truncatedBodyThenAbort() throws {
        try withLoopbackServer { running in
            let client = try running.client()
            try client.sendRaw("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
            client.close()
            #expect(running.eventually { running.server.openConnectionCount == 0 })
            #expect(running.responder.handled.withLock { $0 } == 0)
            let other = try running.client()
            defer { other.close() }
            #expect(try other.request(get("/ok")).status == 200)
        }
    }

    @Test func requestSmugglingShapesAreRefused() throws {
        try expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                        status: 400)
        try expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde",
                        status: 400)
    }
}
