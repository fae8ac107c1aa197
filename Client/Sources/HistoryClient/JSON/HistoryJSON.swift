import Foundation

/// The JSON coders the client uses, configured for the contract's dates.
///
/// Keys are mapped explicitly by each model's `CodingKeys` (never
/// `.convertFromSnakeCase`, which turns `client_id` into `clientId` and would
/// make every model spell its properties the way the converter guesses).
/// Dates go through `RFC3339` (internal) so Linux and Darwin read them the same way.
public enum HistoryJSON {
    /// A decoder for the server's answers (and for models an app cached with ``makeEncoder()``).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "not an RFC 3339 UTC timestamp: \(text)")
            }
            return date
        }
        return decoder
    }

    /// An encoder that writes dates the way the server does, so a model
    /// encoded here decodes with ``makeDecoder()`` unchanged.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
