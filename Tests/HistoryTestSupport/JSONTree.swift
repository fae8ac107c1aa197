/// Any JSON document as a typed tree, decoded by Foundation: for tests of
/// the wire form itself (which members are present, which are `null`),
/// where a model's decoding would read a missing member and a `null` alike.
public enum JSONTree: Decodable, Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONTree])
    case object([String: JSONTree])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONTree].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    /// An object's member names; empty for anything else.
    public var keys: Set<String> {
        if case .object(let members) = self { Set(members.keys) } else { [] }
    }

    /// An object's member, nil when absent or not an object.
    public subscript(key: String) -> JSONTree? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// A string's value, nil for anything else.
    public var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// An array's elements; empty for anything else.
    public var elements: [JSONTree] {
        if case .array(let elements) = self { elements } else { [] }
    }
}
