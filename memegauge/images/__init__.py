"""Image work: drawing the project's own sample memes (`render`) and erasing meme text from images
(OCR + inpainting) so that original and rewritten meme texts are scored on the same picture."""
