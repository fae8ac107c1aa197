extension Substring {
    /// The pieces between `separator` bytes, found on UTF-8 bytes the way
    /// RFC 3986 delimits paths and queries: an ASCII separator is never
    /// part of a multi-byte character, so this is `split(separator:)`
    /// without its grapheme breaking (which showed up in the page profile),
    /// and it also splits at a separator followed by a combining mark,
    /// where a Character-wise split would see one `Character`.
    func pieces(separatedBy separator: UInt8, omittingEmpty: Bool) -> [Substring] {
        var pieces: [Substring] = []
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == separator {
                if !omittingEmpty || start != index { pieces.append(self[start..<index]) }
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        if !omittingEmpty || start != utf8.endIndex { pieces.append(self[start...]) }
        return pieces
    }
}

extension Substring {
    /// The first segment of a path (between its leading `/` and the next),
    /// percent-decoded as `Router` decodes segments; nil when the path does
    /// not start with `/` or the segment does not decode. Whatever decides
    /// by a path's place in the API (a caller needed, a rate charged) asks
    /// this, not the raw bytes: `/%761/...` is routed as `/v1/...`, so a
    /// raw-prefix check would let it past. Over UTF-8 bytes: Character-wise
    /// `prefix(while:)` and `hasPrefix` showed in the page profile.
    func decodedFirstPathSegment() -> String? {
        let bytes = utf8
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        let start = bytes.index(after: bytes.startIndex)
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
        return QueryParameters.percentDecoded(self[start..<end], plusIsSpace: false)
    }
}
