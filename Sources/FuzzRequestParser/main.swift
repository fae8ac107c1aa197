import FuzzSupport
import HTTPCore

// Fuzzes `RequestParser` with the bytes of a connection.
//
// Properties, beyond "no trap, no hang":
// - the same bytes fed whole, in pseudo-random pieces, and one byte at a time
//   give the same requests, and an error in one way of feeding is an error
//   in the others (the first error may be named differently: a partial head
//   is refused by its first bytes, a whole one by its first bad field);
// - a completed request respects the limits it was parsed under;
// - what is left buffered after the last request is the same.

/// Small limits, so inputs of a few KiB reach the 413 and 431 paths.
let limits = HTTPLimits(maximumHeadBytes: 1024, maximumBodyBytes: 2048)

/// A completed request as the responder would see it: every part that
/// feeding the bytes differently must not change. Compared as values, not
/// as printed text, which cost more than the parsing itself.
struct ParsedRequest: Equatable, CustomStringConvertible {
    var method: HTTPMethod
    var target: String
    var version: HTTPVersion
    var headers: HTTPHeaders
    var body: [UInt8]
    var keepAlive: Bool
    var expectsContinue: Bool

    init(_ head: RequestHead) {
        method = head.request.method
        target = head.request.target
        version = head.request.version
        headers = head.request.headers
        body = head.request.body
        keepAlive = head.keepAlive
        expectsContinue = head.expectsContinue
    }

    var description: String {
        let fields = headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        return "\(method) \(target) \(version) keepAlive=\(keepAlive) continue=\(expectsContinue)\n\(fields)\n\(body)"
    }
}

/// What a connection would see, in a comparable form.
struct Outcome: Equatable {
    var requests: [ParsedRequest] = []
    var failed = false
    var error: RequestParseError?
    var bufferedByteCount = 0
    var hasPartialRequest = false
}

/// Feeds `pieces` in order, taking every request the parser can give after each.
func parse(_ pieces: some Sequence<ArraySlice<UInt8>>) -> Outcome {
    var parser = RequestParser(limits: limits)
    var outcome = Outcome()
    feeding: for piece in pieces {
        piece.withUnsafeBytes { parser.append($0) }
        while true {
            do {
                switch try parser.next() {
                case .needMore:
                    continue feeding
                case .headComplete(let head):
                    fuzzCheck(parser.isReadingBody, "headComplete but not reading a body: \(ParsedRequest(head))")
                case .complete(let head):
                    fuzzCheck(head.request.body.count <= limits.maximumBodyBytes,
                              "a body of \(head.request.body.count) bytes passed a limit of \(limits.maximumBodyBytes)")
                    outcome.requests.append(ParsedRequest(head))
                }
            } catch {
                outcome.failed = true
                outcome.error = error
                return outcome
            }
        }
    }
    outcome.bufferedByteCount = parser.bufferedByteCount
    outcome.hasPartialRequest = parser.hasPartialRequest
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = LibFuzzer.bytes(data, size)
    let whole = parse([bytes[...]])
    let split = parse(SplitPoints(of: bytes))
    for (name, other) in [("pieces", split)] + (bytes.count <= 2048 ? [("bytes", parse(SplitPoints.everyByte(of: bytes)))] : []) {
        fuzzCheck(other.requests == whole.requests,
                  "fed in \(name), the requests differ:\n\(other.requests)\nfed whole:\n\(whole.requests)")
        fuzzCheck(other.failed == whole.failed,
                  "fed in \(name): error \(String(describing: other.error)); fed whole: \(String(describing: whole.error))")
        if !whole.failed {
            fuzzCheck(other.bufferedByteCount == whole.bufferedByteCount && other.hasPartialRequest == whole.hasPartialRequest,
                      "fed in \(name), \(other.bufferedByteCount) bytes stay buffered; fed whole, \(whole.bufferedByteCount)")
        }
    }
    return 0
}

LibFuzzer.run(testOneInput)
