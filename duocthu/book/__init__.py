"""The formulary as a book: typeset it (``duocthu book build``), read a book back
(``duocthu import-pdf``) and render a page of it as an image (:func:`duocthu.book.pages.page_png`)."""
