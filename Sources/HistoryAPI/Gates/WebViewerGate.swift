import HTTPCore

/// The web viewer's files (`WebViewer`), answered before any token is
/// asked for: they hold no data. Any other path goes on to the API.
final class WebViewerGate: RequestGate {
    let viewer: WebViewer

    init(viewer: WebViewer) {
        self.viewer = viewer
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        viewer.response(to: passage.request)
    }
}
