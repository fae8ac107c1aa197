import Testing
@testable import HTTPCore

/// Feeds `text` in two pieces cut at `cut`, then (optionally) ends the input.
private func responses(_ text: String, cut: Int? = nil, answersHead: [Bool] = [], endOfInput: Bool = false) throws -> [HTTPClientResponse] {
    let bytes = Array(text.utf8)
    var parser = ResponseParser()
    var result: [HTTPClientResponse] = []
    let pieces = cut.map { [Array(bytes[..<$0]), Array(bytes[$0...])] } ?? [bytes]
    for piece in pieces {
        parser.append(piece)
        while let response = try parser.next(answersHead: result.count < answersHead.count ? answersHead[result.count] : false) {
            result.append(response)
        }
    }
    if endOfInput, let last = parser.finishAtEndOfInput() { result.append(last) }
    return result
}

@Suite("ResponseParser and RequestSerializer")
struct ResponseParserTests {
    @Test func parsesEveryFramingSplitAnywhere() throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
            + "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"  // answers HEAD: no body
            + "HTTP/1.0 200 OK\r\n\r\nuntil the end"
        let expected: [(Int, String)] = [(200, "hello"), (201, "abcde"), (204, ""), (200, ""), (200, "until the end")]
        for cut in 0...text.utf8.count {
            let parsed = try responses(text, cut: cut, answersHead: [false, false, false, true, false], endOfInput: true)
            #expect(parsed.map(\.status) == expected.map(\.0), "cut at \(cut)")
            #expect(parsed.map(\.bodyText) == expected.map(\.1), "cut at \(cut)")
        }
        let whole = try responses(text, answersHead: [false, false, false, true, false], endOfInput: true)
        #expect(whole[1].reason == "Created")
        #expect(whole[4].version == .http1_0)
        #expect(whole[3].headers["content-length"] == "99")
    }

    @Test func interimResponsesHaveNoBody() throws {
        let parsed = try responses("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(parsed.map(\.status) == [100, 200])
        #expect(parsed[1].bodyText == "ok")
    }

    @Test(arguments: [
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTX/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        // Too many digits for an Int: refused, never read into one.
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
    ])
    func refusesMalformedResponses(text: String) {
        #expect(throws: HTTPClientError.self) { try responses(text) }
    }

    @Test func serializesRequestsWithHostAndLength() {
        var bytes: [UInt8] = []
        RequestSerializer.append(HTTPRequest(method: .post, target: "/m", headers: ["X-A": "1"], body: Array("hey".utf8)),
                                 host: "127.0.0.1:80", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self)
                == "POST /m HTTP/1.1\r\nX-A: 1\r\nHost: 127.0.0.1:80\r\nContent-Length: 3\r\n\r\nhey")
        bytes = []
        RequestSerializer.append(HTTPRequest(method: .get, target: "/", headers: ["host": "h"]), host: "x", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "GET / HTTP/1.1\r\nhost: h\r\n\r\n")
    }

    @Test func serializedResponsesParseBack() throws {
        var bytes: [UInt8] = []
        var response = HTTPResponse.json(.notFound, Array(#"{"error":{"code":"not_found","message":"no \"such\" path"}}"#.utf8))
        response.headers.add(name: "Content-Length", value: "999")  // the serializer's own value wins
        response.headers.add(name: "X-Evil", value: "a\r\nInjected: yes")
        ResponseSerializer.append(response, omitBody: false, connection: .close, to: &bytes)
        ResponseSerializer.append(HTTPResponse(status: .noContent, body: Array("dropped".utf8)), omitBody: false,
                                  connection: .none, to: &bytes)
        ResponseSerializer.append(HTTPResponse(status: .ok, body: Array("12345".utf8)), omitBody: true,
                                  connection: .keepAlive, to: &bytes)
        var parser = ResponseParser()
        parser.append(bytes)
        let first = try #require(try parser.next(answersHead: false))
        #expect(first.status == 404)
        #expect(first.reason == "Not Found")
        #expect(first.headers.values(of: "Content-Length") == ["\(first.body.count)"])
        #expect(first.headers["Injected"] == nil)
        #expect(first.headers["Connection"] == "close")
        #expect(first.bodyText == #"{"error":{"code":"not_found","message":"no \"such\" path"}}"#)
        let second = try #require(try parser.next(answersHead: false))
        #expect(second.status == 204 && second.body.isEmpty && second.headers["Content-Length"] == nil)
        let third = try #require(try parser.next(answersHead: true))
        #expect(third.headers["Content-Length"] == "5" && third.body.isEmpty)
        #expect(third.headers["Connection"] == "keep-alive")
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func dateHeaderIsIMFFixdate() {
        #expect(String(decoding: HTTPDate.headerLine(for: 784_111_777), as: UTF8.self)
                == "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
    }
}
