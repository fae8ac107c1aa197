/// Header fields in the order they came, with case-insensitive lookup
/// (RFC 9110 §5.1: field names are case-insensitive).
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// Replaces every field of that name with one.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        fields.append((name, value))
    }

    public mutating func remove(name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// The first value of the field, if any.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of the field, in order.
    public func values(of name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

extension String {
    /// ASCII case-insensitive equality, as header names and tokens need.
    ///
    /// Over the contiguous UTF-8 of both strings (every header name is a
    /// native string): `zip` over two `UTF8View`s went through their
    /// generic iterators, and the lookups of a page's request (`Host`,
    /// `Accept-Encoding`, `If-None-Match`, `Authorization`...) cost 2% of
    /// its instructions (callgrind, docs/performance.md).
    public func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        if let equal = utf8.withContiguousStorageIfAvailable({ a in
            other.utf8.withContiguousStorageIfAvailable { b in Self.asciiCaseInsensitiveEqual(a, b) }
        }), let equal {
            return equal
        }
        return zip(utf8, other.utf8).allSatisfy { x, y in Self.asciiCaseInsensitiveEqual(x, y) }
    }

    private static func asciiCaseInsensitiveEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<a.count where !asciiCaseInsensitiveEqual(a[index], b[index]) { return false }
        return true
    }

    @inline(__always)
    private static func asciiCaseInsensitiveEqual(_ x: UInt8, _ y: UInt8) -> Bool {
        x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
    }
}
