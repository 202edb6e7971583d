"""The matplotlib backend of hotline's Python driver: figures render with Agg (no display needed) and
come back as image/png displays of the current run, at plt.show() and for figures still open when
the run ends. python_driver.py selects it on matplotlib's first import and sets `publish`.
"""

import io
import sys

from matplotlib import rc_context
from matplotlib._pylab_helpers import Gcf
from matplotlib.backends.backend_agg import FigureCanvasAgg

FigureCanvas = FigureCanvasAgg

# publish(data, metadata): sends one display message of the current run (set by the driver).
publish = None


def figure_bundle(figure):
    """The figure as {image/png, text/plain}: its pixel size is the figure's own (size × dpi), never cropped."""
    buffer = io.BytesIO()
    # A user's savefig.bbox = "tight" would crop the image to its artists; the figure's size is what it says.
    with rc_context({"savefig.bbox": "standard"}):
        figure.savefig(buffer, format="png", dpi=figure.dpi)
    return {"image/png": buffer.getvalue(), "text/plain": repr(figure)}, {}


def flush_figures(skip=()):
    """Every open figure goes out as a display (except those in `skip`, already shown by id) and is closed."""
    for manager in list(Gcf.get_all_fig_managers()):
        figure = manager.canvas.figure
        try:
            if publish is not None and id(figure) not in skip:
                publish(*figure_bundle(figure))
        except Exception as err:  # noqa: BLE001 (one broken figure must not hide the others)
            sys.stderr.write("figure %s could not be rendered: %s: %s\n" % (manager.num, type(err).__name__, err))
        finally:
            Gcf.destroy(manager)


def show(*args, **kwargs):
    """plt.show(): the open figures are shown now, then closed (as Jupyter's inline backend does)."""
    flush_figures()
