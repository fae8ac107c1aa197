/// One file of the web viewer, as `web/` held it when the binary was built.
///
/// The files reach this module through the `EmbedWebViewer` build plugin,
/// which generates `embeddedWebAssets`; a module of their own so that
/// editing the viewer recompiles one small module, not the API.
public struct WebViewerFile: Sendable, Hashable {
    /// The file's name in `web/`, e.g. `app.js`; served at `/app.js`.
    public let name: String
    /// The file's bytes, exactly.
    public let bytes: [UInt8]

    /// Every file of `web/`, sorted by name.
    public static let all: [WebViewerFile] = embeddedWebAssets.map {
        WebViewerFile(name: $0.name, bytes: Array($0.text.utf8))
    }
}
