/// An `Authorization` header value split into its scheme and token as
/// bytes: optional whitespace (spaces and tabs) around the value, the
/// scheme `Bearer` in any case (RFC 9110 §11.1, RFC 6750 §2.1), whitespace,
/// the token.
///
/// Only for ASCII values: for one with any other byte, `split` answers
/// `.notASCII` and the caller splits it by `Character`, where a space
/// joined to a combining mark is part of a character and is not trimmed.
/// For ASCII the two splits agree byte for byte (header values hold no CR
/// or LF, the one ASCII pair that is a single `Character`).
enum BearerHeader {
    enum Split: Equatable {
        /// Empty or only whitespace.
        case missing
        /// The token's bytes in the value.
        case token(Range<Int>)
        /// Not a usable bearer credential, and why (for the log).
        case refused(String)
        case notASCII
    }

    static let notBearer = "not a Bearer credential"
    static let noToken = "no token after Bearer"
    static let spacesInside = "the credential has spaces inside"
    static let tooLong = "longer than \(TokenVerifier.maximumTokenBytes) bytes"

    static func split(_ value: UnsafeBufferPointer<UInt8>) -> Split {
        var start = 0
        var end = value.count
        while start < end, isWhitespace(value[start]) { start += 1 }
        while end > start, isWhitespace(value[end - 1]) { end -= 1 }
        guard start < end else { return .missing }
        var space = start
        while space < end, !isWhitespace(value[space]) {
            if value[space] >= 0x80 { return .notASCII }
            space += 1
        }
        let isBearer = isBearerScheme(UnsafeBufferPointer(rebasing: value[start..<space]))
        guard space < end else { return .refused(isBearer ? noToken : notBearer) }
        guard isBearer else {
            return value[space...].contains(where: { $0 >= 0x80 }) ? .notASCII : .refused(notBearer)
        }
        var tokenStart = space
        while isWhitespace(value[tokenStart]) { tokenStart += 1 }
        var hasSpaceInside = false
        var index = tokenStart
        // Eight bytes at a time while none is whitespace or above ASCII
        // (a token is about 200 base64url bytes), then byte by byte.
        while index + 8 <= end {
            let word = UnsafeRawPointer(value.baseAddress! + index).loadUnaligned(as: UInt64.self)
            guard isPlainASCII(word) else { break }
            index += 8
        }
        for byte in UnsafeBufferPointer(rebasing: value[index..<end]) {
            if byte >= 0x80 { return .notASCII }
            if isWhitespace(byte) { hasSpaceInside = true }
        }
        if end - tokenStart > TokenVerifier.maximumTokenBytes { return .refused(tooLong) }
        if hasSpaceInside { return .refused(spacesInside) }
        return .token(tokenStart..<end)
    }

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// True when none of the eight bytes is above ASCII, a space or a tab
    /// (the "has zero byte" trick per byte value, exact for "none").
    @inline(__always)
    private static func isPlainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let spaces = word ^ (ones &* 0x20)
        let tabs = word ^ (ones &* 0x09)
        return (word | ((spaces &- ones) & ~spaces) | ((tabs &- ones) & ~tabs)) & highs == 0
    }

    /// `bearer` in any case, compared as ASCII.
    private static func isBearerScheme(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        scheme.count == 6
            && scheme[0] | 0x20 == UInt8(ascii: "b") && scheme[1] | 0x20 == UInt8(ascii: "e")
            && scheme[2] | 0x20 == UInt8(ascii: "a") && scheme[3] | 0x20 == UInt8(ascii: "r")
            && scheme[4] | 0x20 == UInt8(ascii: "e") && scheme[5] | 0x20 == UInt8(ascii: "r")
    }
}
