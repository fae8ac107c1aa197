/// Decodes a `Transfer-Encoding: chunked` body (RFC 9112 §7.1) piece by
/// piece as bytes arrive: chunk sizes in hex, extensions ignored, trailer
/// fields read and discarded. Shared by the request and response parsers.
///
/// Limits apply to what the sender controls: the decoded body
/// (`maximumBodyBytes`, 413), the framing around it (`maximumFramingBytes`,
/// so a body of one-byte chunks cannot cost five times the body limit, 413),
/// and the trailer section (`maximumTrailerBytes`, 431). Chunk framing must end
/// its lines with CRLF: unlike the head, a bare LF is refused here, because
/// disagreeing about where a chunk ends is how request smuggling starts.
///
/// `package`, not internal, so that its fuzz target reaches it in an
/// optimised build, where `@testable import` is not available.
package struct ChunkedBodyDecoder: Sendable {
    private enum State: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    /// One chunk-size line (size plus extensions) may be at most this long.
    static let maximumSizeLineBytes = 4096

    private var state = State.size
    private var framingBytes = 0
    private var trailerBytes = 0
    let maximumBodyBytes: Int
    let maximumFramingBytes: Int
    let maximumTrailerBytes: Int

    package init(maximumBodyBytes: Int, maximumFramingBytes: Int, maximumTrailerBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumFramingBytes = maximumFramingBytes
        self.maximumTrailerBytes = maximumTrailerBytes
    }

    package var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Decodes `bytes[start..<end]`, appending chunk data to `body`, and
    /// returns how far it consumed; stops early at the end of the message.
    package mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int,
                         into body: inout [UInt8]) throws(RequestParseError) -> Int {
        var position = start
        while position < end {
            switch state {
            case .size:
                guard let lf = HTTPSyntax.firstIndex(of: HTTPSyntax.lf, in: bytes, position..<end) else {
                    if end - position > Self.maximumSizeLineBytes { throw .invalidChunkedBody }
                    return position
                }
                guard lf - position <= Self.maximumSizeLineBytes, lf > position,
                      bytes[lf - 1] == HTTPSyntax.cr else { throw .invalidChunkedBody }
                let size = try Self.chunkSize(bytes, position..<(lf - 1))
                try addFraming(lf + 1 - position)
                if size > maximumBodyBytes - body.count { throw .bodyTooLarge }
                position = lf + 1
                state = size == 0 ? .trailers : .data(remaining: size)
            case .data(let remaining):
                let count = min(remaining, end - position)
                body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<(position + count)]))
                position += count
                state = count == remaining ? .dataEnd : .data(remaining: remaining - count)
            case .dataEnd:
                guard bytes[position] == HTTPSyntax.cr else { throw .invalidChunkedBody }
                guard position + 1 < end else { return position }
                guard bytes[position + 1] == HTTPSyntax.lf else { throw .invalidChunkedBody }
                try addFraming(2)
                position += 2
                state = .size
            case .trailers:
                guard let lf = HTTPSyntax.firstIndex(of: HTTPSyntax.lf, in: bytes, position..<end) else {
                    if trailerBytes + (end - position) > maximumTrailerBytes { throw .headTooLarge }
                    return position
                }
                guard lf > position, bytes[lf - 1] == HTTPSyntax.cr else { throw .invalidChunkedBody }
                let line = position..<(lf - 1)
                trailerBytes += lf + 1 - position
                if trailerBytes > maximumTrailerBytes { throw .headTooLarge }
                position = lf + 1
                if line.isEmpty {
                    state = .done
                    return position
                }
                // A trailer field is discarded, but it must still be a field
                // line (RFC 9112 §7.1.2, §5.1): a token, then a colon with no
                // space before it. Anything else (a request line that a
                // proxy in front might frame differently) is refused.
                guard let colon = HTTPSyntax.firstIndex(of: HTTPSyntax.colon, in: bytes, line),
                      colon > line.lowerBound else { throw .invalidChunkedBody }
                for index in line.lowerBound..<colon where !HTTPSyntax.isTokenByte(bytes[index]) {
                    throw .invalidChunkedBody
                }
                for index in (colon + 1)..<line.upperBound where !HTTPSyntax.isFieldValueByte(bytes[index]) {
                    throw .invalidChunkedBody
                }
            case .done:
                return position
            }
        }
        return position
    }

    private mutating func addFraming(_ count: Int) throws(RequestParseError) {
        framingBytes += count
        if framingBytes > maximumFramingBytes { throw .bodyTooLarge }
    }

    /// `chunk-size [ BWS ";" chunk-ext ]`: the hex size; extensions are
    /// checked for control bytes and otherwise ignored.
    private static func chunkSize(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(RequestParseError) -> Int {
        var size = 0
        var digits = 0
        var position = range.lowerBound
        while position < range.upperBound, let digit = HTTPSyntax.hexValue(bytes[position]) {
            if size > (Int.max >> 4) { throw .invalidChunkedBody }
            size = size << 4 | digit
            digits += 1
            position += 1
        }
        guard digits > 0 else { throw .invalidChunkedBody }
        while position < range.upperBound && HTTPSyntax.isWhitespace(bytes[position]) { position += 1 }
        if position < range.upperBound {
            guard bytes[position] == HTTPSyntax.semicolon else { throw .invalidChunkedBody }
            for index in position..<range.upperBound where !HTTPSyntax.isFieldValueByte(bytes[index]) {
                throw .invalidChunkedBody
            }
        }
        return size
    }
}
