import Foundation

/// A report that `--json FILE` writes: every command writes its file the
/// same way (pretty, sorted, snake_case keys), so scripts read them alike.
protocol JSONFileReport: Encodable {}

extension JSONFileReport {
    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
