/// Why bytes on a connection could not become a request, each case with the
/// status it is answered with (the connection closes after every one of
/// them: the framing can no longer be trusted). The responder renders the
/// answer, as `HTTPFailure.malformedRequest`.
///
/// A closed set, hence an enum (like SwiftNIO's `HTTPParserError`), so tests
/// write `#expect(throws: RequestParseError.obsoleteLineFolding)`.
public enum RequestParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request line is not `method SP target SP version`.
    case invalidRequestLine
    /// The method is not a token.
    case invalidMethod
    /// The target is not origin-form, absolute-form or `*` (OPTIONS only).
    case invalidTarget
    /// The version is not `HTTP/DIGIT.DIGIT`.
    case invalidVersion
    /// A well-formed version of another major than HTTP/1 (505); a later 1.x is served as 1.1.
    case unsupportedVersion
    /// A field name that is not a token, or whitespace before the colon.
    case invalidHeaderName
    /// A field line without a colon.
    case invalidHeaderLine
    /// A field value holding NUL, CR or another control byte.
    case invalidHeaderValue
    /// More than one Host field (RFC 9112 §3.2: which one names the target is unknowable).
    case duplicateHost
    /// An HTTP/1.1 request without a Host field (RFC 9112 §3.2).
    case missingHost
    /// A field line starting with whitespace (RFC 9112 §5.2 obs-fold).
    case obsoleteLineFolding
    /// A CR not followed by LF in the head.
    case bareCarriageReturn
    /// Content-Length is not digits, overflows, or copies disagree.
    case invalidContentLength
    /// Both Transfer-Encoding and Content-Length (RFC 9112 §6.3: a smuggling risk).
    case contentLengthWithTransferEncoding
    /// Transfer-Encoding malformed, chunked not last or repeated, or sent with HTTP/1.0.
    case invalidTransferEncoding
    /// A transfer coding other than chunked (501).
    case unsupportedTransferEncoding
    /// A chunk-size line, chunk terminator or trailer section is malformed.
    case invalidChunkedBody
    /// An Expect value other than 100-continue (417).
    case unsupportedExpectation
    /// Request line and fields (or a chunked body's trailers) over `maximumHeadBytes` (431).
    case headTooLarge
    /// Declared or decoded body (or its chunk framing) over `maximumBodyBytes` (413).
    case bodyTooLarge
    /// The head or body did not arrive within its time limit (408).
    case requestTimeout
    /// The peer ended its input in the middle of a request.
    case truncatedRequest

    /// The status the error is answered with.
    public var status: HTTPStatus {
        switch self {
        case .unsupportedVersion: .httpVersionNotSupported
        case .unsupportedTransferEncoding: .notImplemented
        case .unsupportedExpectation: .expectationFailed
        case .headTooLarge: .requestHeaderFieldsTooLarge
        case .bodyTooLarge: .contentTooLarge
        case .requestTimeout: .requestTimeout
        default: .badRequest
        }
    }

    public var description: String {
        switch self {
        case .invalidRequestLine: "malformed request line"
        case .invalidMethod: "request method is not a token"
        case .invalidTarget: "request target is not an origin-form path"
        case .invalidVersion: "malformed HTTP version"
        case .duplicateHost: "more than one Host header field"
        case .missingHost: "an HTTP/1.1 request needs a Host header field"
        case .unsupportedVersion: "only HTTP/1.x is supported"
        case .invalidHeaderName: "malformed header field name"
        case .invalidHeaderLine: "header field line without a colon"
        case .invalidHeaderValue: "header field value contains a control character"
        case .obsoleteLineFolding: "obsolete line folding is not accepted"
        case .bareCarriageReturn: "CR not followed by LF"
        case .invalidContentLength: "invalid Content-Length"
        case .contentLengthWithTransferEncoding: "both Transfer-Encoding and Content-Length"
        case .invalidTransferEncoding: "invalid Transfer-Encoding"
        case .unsupportedTransferEncoding: "only the chunked transfer coding is supported"
        case .invalidChunkedBody: "malformed chunked body"
        case .unsupportedExpectation: "only Expect: 100-continue is supported"
        case .headTooLarge: "request line and headers are too large"
        case .bodyTooLarge: "request body is too large"
        case .requestTimeout: "request not received in time"
        case .truncatedRequest: "request ended before it was complete"
        }
    }
}
