/// Rows in COPY's text format, built in one byte buffer: columns separated
/// by a tab, rows ended by a newline, NULL as `\N`, and in text the four
/// bytes that would break that (backslash, tab, newline, carriage return)
/// escaped with a backslash. Everything else goes through as UTF-8.
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.2>
public struct PostgresCopyRows {
    public private(set) var bytes: [UInt8] = []
    private var atRowStart = true

    public init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    public var isEmpty: Bool { bytes.isEmpty }

    public mutating func append(_ value: Int64) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func append(_ value: Int64?) {
        guard let value else { return appendNull() }
        append(value)
    }

    public mutating func append(_ value: Bool) {
        separate()
        bytes.append(value ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

    public mutating func append(_ text: String) {
        separate()
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: bytes.append(byte)
            }
        }
    }

    public mutating func append(_ text: String?) {
        guard let text else { return appendNull() }
        append(text)
    }

    /// Text for a `bytea` column (the store keeps free text as its UTF-8
    /// bytes, so U+0000 survives): bytea's hex form `\x4142`, its backslash
    /// doubled for COPY.
    public mutating func appendBytes(_ text: String) {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
        for byte in text.utf8 {
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }

    public mutating func appendBytes(_ text: String?) {
        guard let text else { return appendNull() }
        appendBytes(text)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public mutating func appendNull() {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
    }

    public mutating func endRow() {
        bytes.append(UInt8(ascii: "\n"))
        atRowStart = true
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        atRowStart = true
    }

    private mutating func separate() {
        if !atRowStart { bytes.append(UInt8(ascii: "\t")) }
        atRowStart = false
    }
}
