"""Given names, so that "Given Family" is typed PERSON even when statistical NER says otherwise.

The small spaCy model types many names it has not seen as places or companies ("Marguerite
Okafor", "Tomasz Wieczorek", "Elif Demir"). Three sources, loaded once on first use:

- the curated list in ``lexicon.FIRST_NAMES``;
- ``INTERNATIONAL`` below: common given names of cultures the US census lists miss;
- the US census first names shipped by the ``names`` package (MIT; ~5,000 names), minus
  ``AMBIGUOUS``: census names that are ordinary English words, months or places ("Will",
  "Chase", "Page", "April", "Austin"), which would turn "Will Platform …" into a person.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from importlib import resources

from knotwork.ingestion.extraction.lexicon import FIRST_NAMES

__all__ = ["given_names", "is_given_name"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


INTERNATIONAL = _words("""
    aarav abhishek aditi aditya akash akshay amal amara amina amit anand ananya anil anjali ankit
    anupam arun aruna asif bhavna deepa deepak devendra dinesh divya farhan gaurav geeta girish
    gopal harish hari harsha indira ishaan jaya jayesh kavya kiran krishna kumar lakshmi madhav
    mahesh manish manoj meera mohan mukesh naveen neha nikhil nisha nitin pooja pradeep pranav
    prakash pratik priyanka rahul raj rajesh rajiv rakesh ramesh ravi rohan rohit sachin sanjay
    sanjeev santosh sarita shreya shweta siddharth sneha sonal sunil sunita suresh swati tanvi
    uma varun vijay vikram vinay vinod vishal yash
    aigerim aliya arman askar bakyt dana gulnara nurlan
    abdullah ahmad amr ayman bilal faisal farid hamza hassan hussein karim khalid layla mahmoud
    mariam mohamed mona mostafa mustafa nadia nour omar rami rania reem salma samir sara tariq
    yasmin yousef youssef zainab zaid ziad
    ahmet ali ayse aylin burak cem deniz elif emine emre esra fatma gizem hakan kemal
    mehmet murat ozge selin serkan tuba volkan yusuf zeynep
    agnieszka aleksander aleksandra anna bartosz dorota ewa grzegorz jakub jan joanna kamil
    katarzyna krzysztof lukasz maciej magdalena malgorzata marcin marek michal pawel piotr
    tomasz wojciech zofia zuzana
    anastasia andrei boris dmitry ekaterina igor irina ivan katya natalia nikolai oksana olga
    pavel sergei svetlana tatiana vladimir yuri yulia
    bjorn dag erik freya gunnar ingrid johan lars linnea magnus nils oskar sigrid sven thor
    anders astrid henrik kristin mats pernille soren
    adaeze adebayo adewale amaka babajide chidi chinedu chioma chukwuemeka emeka folake ifeoma
    kelechi kemi ngozi nnamdi obinna olumide oluwaseun segun tunde uchenna yetunde
    abena akua ama kofi kojo kwabena kwame kwesi yaa
    amani baraka jabari juma neema wanjiru zawadi
    ayumi daichi haruka haruto hina hiroki kaito kenji kenta mai makoto miyu naoki ren riku
    sakura satoshi shota takashi takumi yuki yuko yuto
    eun hyun jae ji jin jisoo min minjun seo seojun soo sung yeon yoon
    anh bao duc hoa lan linh minh ngoc phuong quang thanh thao trang tuan
    bo chen fang hao hui jian jun lei li lin mei ming ning qiang rui tao wei xia
    xiao xin yan yang ying yong yu yun zhen zhi
    agustin alejandra alvaro beatriz camilo catalina diego emilio esteban gonzalo ignacio
    javier jimena joaquin leticia lucia luciana luis mateo matias nicolas pablo paola rocio
    santiago sofia valentina ximena
    afonso andreia bruno caio goncalo joao leonor mariana rafaela thiago vitoria
    aurelie benoit camille clement elodie etienne fabien gaelle guillaume helene julien
    laurent mathieu nathalie pierre sebastien severine thibault yannick
    carsten dieter florian jurgen katrin lukas matthias sabine stefan torsten ulrich wolfgang
    alessandro chiara federico giorgio giulia giuseppe lorenzo luca marco matteo paolo riccardo
    sergio simona stefano
    aoife ciara ciaran eoin niamh oisin padraig saoirse siobhan sinead
    dafydd gareth rhys sian
""")

AMBIGUOUS = _words("""
    al alpha an angle art april august autumn bell berry birdie blanch blossom bong brain brook
    buck bud burl candy carry chance chase cherish cherry chin christen clay coral desire dimple
    dong dot dung earnest ebony echo fawn forest garland german glory golden guy hang honey hue
    in irish jewel june january kip kit lacy lance lean loan long love major man manual many
    marine mark marry marvel may merry miss misty moon noble ok page pasty pearly peg ping porter
    precious queen rich rocky rosy royal sage season see september shin so soon sparkle spring
    star sterling stormy summer sun sunday sunny tawny tiny velvet wan ward will windy winter yen
    yon young
    america argentina asia austin burma carolina charity chastity cheyenne china cleveland crystal
    dakota dallas delta denver destiny diamond emerald florida france garnet genesis geneva
    georgia harmony houston india israel ivory kenya king liberty lincoln madison maryland milan
    nevada numbers omega opal paris patience phoenix prince princess prudence santa savannah
    shasta sierra sydney temple tijuana trinidad trinity valencia venice venus verona victoria
    virginia
    fe ha ja jc ka le ma mi my na nu pa ta tu un vi wm
    da de del della der di du la le ling mac st van von
""")


@lru_cache(maxsize=1)
def _census() -> frozenset[str]:
    found: set[str] = set()
    try:
        folder = resources.files("names")
        for name in ("dist.male.first", "dist.female.first"):
            for line in (folder / name).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    found.add(line.split()[0].lower())
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return frozenset()  # the package is optional: the curated lists still work
    return frozenset(found - AMBIGUOUS)


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """Every given name known (lowercase)."""
    return FIRST_NAMES | INTERNATIONAL | _census()


def is_given_name(word: str) -> bool:
    """Accents aside: "Tomás", "Lucía", "Zoë" are the listed "tomas", "lucia", "zoe"; a
    compound of given names is one too ("Anne-Marie")."""
    if "-" in word.strip("-"):  # a compound given name: "Anne-Marie", "Jean-Luc" (a given
        first = word.split("-")  # name first, then capitalised words: "Self-Serve" is none)
        return is_given_name(first[0]) and all(p[:1].isupper() and p[1:].islower() and p.isalpha()
                                              for p in first[1:])
    lowered = word.lower()
    names = given_names()
    if lowered in names:
        return True
    folded = "".join(c for c in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(c))
    return folded != lowered and folded in names
