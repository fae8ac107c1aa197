/// The URL-safe base64 alphabet without padding (RFC 4648 §5), as JWS uses it
/// for every part of a compact token.
///
/// Decoding is strict on purpose: a token is untrusted input, and a lenient
/// decoder (one that skips unknown characters, accepts `=` or ignores the
/// unused low bits of the last character) lets many different strings stand
/// for the same signed token, which is how a cache keyed by the token's bytes
/// or a log that deduplicates tokens gets confused.
///
/// ```swift
/// Base64URL.decode("aGk".utf8)    // [0x68, 0x69]
/// Base64URL.encode([0x68, 0x69])  // "aGk"
/// ```
///
/// Related specification: <https://www.rfc-editor.org/rfc/rfc4648#section-5>
enum Base64URL {
    /// The bytes `text` encodes, or nil when it holds a character outside
    /// `[A-Za-z0-9_-]` (padding included), has an impossible length, or sets
    /// bits that a canonical encoder leaves zero.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let count = text.count
        if count % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for character in text {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // The 2 or 4 bits left over by a short last group must be zero.
        guard accumulator == 0 else { return nil }
        return output
    }

    /// `bytes` in the URL-safe alphabet, without padding.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 6 {
                bitCount -= 6
                output.append(alphabet[Int(accumulator >> UInt32(bitCount) & 0x3F)])
            }
            accumulator &= (1 << UInt32(bitCount)) - 1
        }
        if bitCount > 0 {
            output.append(alphabet[Int(accumulator << UInt32(6 - bitCount) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
