import CLibPQ

/// A value sent as a statement parameter (`$1`, `$2`, ...).
///
/// Integers, booleans and bytes travel in PostgreSQL's binary format (no
/// decimal text to print and parse on either side, and a `bytea` needs no
/// escaping); text travels as text with its type left for the server to
/// infer from the statement, as for a literal.
///
/// ```swift
/// try connection.query("SELECT id FROM messages WHERE conversation_seq = $1 AND client_id = $2",
///                      [.int64(seq), .text(clientID)])
/// try connection.query("SELECT $1::bigint + 1", [41])   // literals work too
/// ```
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/libpq-exec.html#LIBPQ-PQEXECPARAMS>
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    /// `bigint` (int8), binary.
    case int64(Int64)
    /// `integer` (int4), binary.
    case int32(Int32)
    /// `boolean`, binary.
    case bool(Bool)
    /// `bytea`, binary.
    case bytes([UInt8])
    /// `bytea[]` (one dimension, nil elements are NULL), binary: any bytes
    /// (a NUL too) with no escaping, where an array literal would have to
    /// escape every byte as hex and double the size.
    case byteaArray([[UInt8]?])
}

extension PostgresValue: ExpressibleByNilLiteral, ExpressibleByStringLiteral,
                         ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int64(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PostgresValue {
    /// Type OIDs from PostgreSQL's `pg_type.dat`; stable across releases
    /// (clients depend on them), so they are constants here.
    enum TypeOID {
        static let unspecified: Oid = 0
        static let bool: Oid = 16
        static let bytea: Oid = 17
        static let byteaArray: Oid = 1001
        static let int8: Oid = 20
        static let int2: Oid = 21
        static let int4: Oid = 23
        static let text: Oid = 25
        static let varchar: Oid = 1043
    }

    /// The parameter's type OID, format (0 text, 1 binary) and bytes; nil
    /// bytes for SQL NULL. Text is NUL-terminated, as libpq reads text
    /// parameters as C strings.
    var encoded: (type: Oid, format: Int32, bytes: [UInt8]?) {
        switch self {
        case .null: (TypeOID.unspecified, 0, nil)
        case .text(let string): (TypeOID.unspecified, 0, Array(string.utf8) + [0])
        case .int64(let value): (TypeOID.int8, 1, Self.bigEndianBytes(of: value))
        case .int32(let value): (TypeOID.int4, 1, Self.bigEndianBytes(of: value))
        case .bool(let value): (TypeOID.bool, 1, [value ? 1 : 0])
        case .bytes(let bytes): (TypeOID.bytea, 1, bytes)
        case .byteaArray(let elements): (TypeOID.byteaArray, 1, Self.binaryArray(elements, of: TypeOID.bytea))
        }
    }

    /// PostgreSQL's binary array format (`array_recv`): dimensions (0 for
    /// an empty array, else 1), a has-NULLs flag, the element type, the
    /// dimension's length and lower bound (1), then each element as its
    /// length (-1 for NULL) and bytes.
    private static func binaryArray(_ elements: [[UInt8]?], of elementType: Oid) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        bytes += bigEndianBytes(of: Int32(elements.isEmpty ? 0 : 1))
        bytes += bigEndianBytes(of: Int32(elements.contains(nil) ? 1 : 0))
        bytes += bigEndianBytes(of: elementType)
        if !elements.isEmpty {
            bytes += bigEndianBytes(of: Int32(clamping: elements.count))
            bytes += bigEndianBytes(of: Int32(1))
        }
        for element in elements {
            if let element {
                bytes += bigEndianBytes(of: Int32(clamping: element.count))
                bytes += element
            } else {
                bytes += bigEndianBytes(of: Int32(-1))
            }
        }
        return bytes
    }

    private static func bigEndianBytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

/// The statement parameters laid out as libpq's four parallel arrays.
struct EncodedParameters {
    private var types: [Oid] = []
    private var formats: [Int32] = []
    private var lengths: [Int32] = []
    /// Every parameter's bytes one after another; `offsets` finds each.
    private var storage: [UInt8] = []
    private var offsets: [Int?] = []

    init(_ values: [PostgresValue]) {
        for value in values {
            let (type, format, bytes) = value.encoded
            types.append(type)
            formats.append(format)
            if let bytes {
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(clamping: bytes.count))
            } else {
                offsets.append(nil)
                lengths.append(0)
            }
        }
    }

    var count: Int32 { Int32(types.count) }

    /// Calls `body` with the arrays libpq takes, valid during the call only.
    func withArrays<R>(_ body: (_ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
                                _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?) throws -> R) rethrows -> R {
        // One extra byte so an empty binary value still has an address.
        let bytes = storage + [0]
        return try bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return try types.withUnsafeBufferPointer { types in
                try pointers.withUnsafeBufferPointer { values in
                    try lengths.withUnsafeBufferPointer { lengths in
                        try formats.withUnsafeBufferPointer { formats in
                            try body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}
